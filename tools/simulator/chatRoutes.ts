import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Behaviour } from './behaviour';
import type { Fault } from './faults';
import { readBody, type Routes } from './http';
import { answer, modelRefusal, SIMULATOR_MODELS, type Said } from './models';
import { providerError } from './protocols';
import {
  isRefusal,
  parseAnthropicRequest,
  parseOpenAiRequest,
  type ChatProtocol,
  type ChatRequest,
  type RequestRefusal,
} from './requestRules';
import { promptTokens } from './tokenizer';

/**
 * The chat APIs, in their wire formats: OpenAI chat completions (`POST /v1/chat/completions`)
 * and Anthropic messages (`POST /v1/messages`). Like the real ones, they refuse a malformed
 * request before any work (requestRules.ts), do the work (and bill it) for every request they
 * accept whatever its Idempotency-Key, honour the asked format and the output cap, and say why
 * the answer stopped.
 */

const ROUTE = { openai: 'chat', anthropic: 'messages' } as const;

/** The request as the API reads it, or the refusal (status and words) it answers instead. */
async function readChatRequest(
  protocol: ChatProtocol,
  req: IncomingMessage,
): Promise<{ body: unknown; request?: ChatRequest; refusal?: RequestRefusal | NotFound }> {
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req)) as unknown;
  } catch {
    return {
      body: undefined,
      refusal: { status: 400, message: 'We could not parse the JSON body of your request.' },
    };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { body, refusal: { status: 400, message: 'The request body must be a JSON object.' } };
  const parsed =
    protocol === 'openai'
      ? parseOpenAiRequest(body as Record<string, unknown>)
      : parseAnthropicRequest(body as Record<string, unknown>);
  if (isRefusal(parsed)) return { body, refusal: parsed };
  if (!SIMULATOR_MODELS.includes(parsed.model)) {
    const message =
      protocol === 'openai'
        ? `The model \`${parsed.model}\` does not exist or you do not have access to it.`
        : `model: ${parsed.model}`;
    return { body, refusal: { status: 404, message, code: 'model_not_found' } };
  }
  const refusal = modelRefusal(parsed);
  return refusal ? { body, request: parsed, refusal } : { body, request: parsed };
}

interface NotFound {
  status: 404;
  message: string;
  code: string;
}

/** Why an OpenAI answer stopped: at the cap, at the content filter, or done. */
function finishReason(said: Said): 'length' | 'content_filter' | 'stop' {
  if (said.kind === 'filtered') return 'content_filter';
  return said.kind === 'answer' && said.truncated ? 'length' : 'stop';
}

/** OpenAI chat completions: JSON text or prose as the content, or a refusal, and why it stopped. */
function chatCompletion(request: ChatRequest, said: Said, prompt: number): unknown {
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [
      {
        index: 0,
        message:
          said.kind === 'refusal'
            ? { role: 'assistant', content: null, refusal: said.text }
            : { role: 'assistant', content: said.text, refusal: null },
        finish_reason: finishReason(said),
        logprobs: null,
      },
    ],
    // As OpenAI reports it; nothing is read from a prompt cache here (the simulator keeps none).
    usage: {
      prompt_tokens: prompt,
      completion_tokens: said.outputTokens,
      total_tokens: prompt + said.outputTokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
  };
}

/** Anthropic messages: a call of the forced tool (or text), and why it stopped. */
function message(request: ChatRequest, said: Said, prompt: number): unknown {
  const base = {
    id: `msg_${randomUUID().replace(/-/g, '')}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    stop_sequence: null,
    // As Anthropic reports it: no cache read or written (nothing here asks for caching).
    usage: {
      input_tokens: prompt,
      output_tokens: said.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    },
  };
  // Anthropic's classifiers stop an answer with a refusal; it has no content-filter reason.
  if (said.kind === 'refusal' || said.kind === 'filtered')
    return { ...base, content: [{ type: 'text', text: said.text }], stop_reason: 'refusal' };
  // Nothing written: no content block at all.
  if (said.text === '') return { ...base, content: [], stop_reason: 'end_turn' };
  const tool = request.format.kind === 'forced_tool' ? request.format.tool : undefined;
  // A tool call whose input is JSON; prose (a model not forced to the tool) comes as text.
  const asToolCall = tool !== undefined && said.json !== null;
  return {
    ...base,
    content: asToolCall
      ? [
          {
            type: 'tool_use',
            id: `toolu_${randomUUID().replace(/-/g, '')}`,
            name: tool,
            input: said.json,
          },
        ]
      : [{ type: 'text', text: said.text }],
    stop_reason: said.truncated ? 'max_tokens' : asToolCall ? 'tool_use' : 'end_turn',
  };
}

export function chatRoutes(behaviour: Behaviour): Routes {
  const chatApi =
    (
      protocol: ChatProtocol,
      format: (request: ChatRequest, said: Said, promptTokens: number) => unknown,
    ) =>
    async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const { body, request, refusal } = await readChatRequest(protocol, req);
      // Only to count the work per attempt: neither API deduplicates by this header.
      const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) || randomUUID();
      const route = ROUTE[protocol];
      if (refusal || !request) {
        const model = (body as { model?: unknown } | undefined)?.model;
        behaviour.refused(
          route,
          {
            idempotencyKey,
            ...(typeof model === 'string' ? { model } : {}),
            fingerprint: '',
            body,
          },
          refusal?.status ?? 400,
        );
        return providerError(res, route, refusal?.status ?? 400, refusal?.message ?? '', refusal);
      }
      await behaviour.perform(
        route,
        req,
        res,
        {
          idempotencyKey,
          model: request.model,
          fingerprint: `${request.model}\n${request.text}`,
          body,
        },
        (fault: Fault | undefined, injected: boolean) =>
          format(
            request,
            answer(request, fault, injected),
            promptTokens(body as Record<string, unknown>),
          ),
        200,
      );
    };
  const chatCompletions = chatApi('openai', chatCompletion);
  const messages = chatApi('anthropic', message);

  return (route) => {
    if (route === 'POST /v1/chat/completions') return chatCompletions;
    if (route === 'POST /v1/messages') return messages;
    return undefined;
  };
}
