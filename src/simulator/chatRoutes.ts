import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Behaviour } from './behaviour';
import { apiError, readBody, type Routes } from './http';
import { answer, SIMULATOR_MODELS } from './models';

/**
 * The chat APIs, in their wire formats: OpenAI chat completions (`POST /v1/chat/completions`)
 * and Anthropic messages (`POST /v1/messages`). Like the real ones, they do the work (and bill
 * it) for every request they receive, whatever its Idempotency-Key.
 */

async function readChatRequest(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ model: string; text: string; idempotencyKey: string } | undefined> {
  let body: { model?: unknown; messages?: unknown };
  try {
    body = JSON.parse(await readBody(req)) as typeof body;
  } catch {
    apiError(res, 400, 'request body is not valid JSON');
    return undefined;
  }
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    apiError(res, 400, 'model and messages are required');
    return undefined;
  }
  if (!SIMULATOR_MODELS.includes(body.model)) {
    apiError(res, 404, `The model \`${body.model}\` does not exist`, 'not_found_error');
    return undefined;
  }
  const lastUser = [...(body.messages as Array<{ role?: unknown; content?: unknown }>)]
    .reverse()
    .find((m) => m.role === 'user' && typeof m.content === 'string');
  if (!lastUser) {
    apiError(res, 400, 'no user message to answer');
    return undefined;
  }
  const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) || randomUUID();
  return { model: body.model, text: lastUser.content as string, idempotencyKey };
}

type Said = ReturnType<typeof answer>;

/** OpenAI chat completions: the model's JSON output (or its prose) as the message content. */
function chatCompletion(model: string, text: string, said: Said): unknown {
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: said.prose ?? JSON.stringify(said.json),
          refusal: null,
        },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: Math.ceil(text.length / 4),
      completion_tokens: 20,
      total_tokens: Math.ceil(text.length / 4) + 20,
    },
  };
}

/** The Anthropic Messages API: structured output comes back as a call of the forced tool. */
function message(model: string, text: string, said: Said): unknown {
  return {
    id: `msg_${randomUUID().replace(/-/g, '')}`,
    type: 'message',
    role: 'assistant',
    model,
    content: said.prose
      ? [{ type: 'text', text: said.prose }]
      : [
          {
            type: 'tool_use',
            id: `toolu_${randomUUID().replace(/-/g, '')}`,
            name: 'record_result',
            input: said.json,
          },
        ],
    stop_reason: said.prose ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: Math.ceil(text.length / 4), output_tokens: 20 },
  };
}

export function chatRoutes(behaviour: Behaviour): Routes {
  /** A chat API: every request is answered by its model, in this wire format. */
  const chatApi =
    (route: 'chat' | 'messages', format: (model: string, text: string, said: Said) => unknown) =>
    async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const request = await readChatRequest(req, res);
      if (!request) return;
      const { model, text, idempotencyKey } = request;
      await behaviour.perform(
        route,
        req,
        res,
        { idempotencyKey, model, fingerprint: `${model}\n${text}` },
        (fault) => format(model, text, answer(model, text, fault)),
        200,
      );
    };
  const chatCompletions = chatApi('chat', chatCompletion);
  const messages = chatApi('messages', message);

  return (route) => {
    if (route === 'POST /v1/chat/completions') return chatCompletions;
    if (route === 'POST /v1/messages') return messages;
    return undefined;
  };
}
