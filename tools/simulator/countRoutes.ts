import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson, type Routes } from './http';
import { countsTokens, SIMULATOR_MODELS } from './models';
import { providerError } from './protocols';
import { isRefusal, parseAnthropicRequest } from './requestRules';
import { promptTokens } from './tokenizer';

/**
 * The endpoints that count a prompt's tokens without running the model, in each API's shape:
 * - Anthropic `POST /v1/messages/count_tokens`: a messages request without `max_tokens`,
 *   answered `{"input_tokens": n}`;
 * - OpenAI `POST /v1/responses/input_tokens`: a Responses request (`input`, `instructions`),
 *   answered `{"object": "response.input_tokens", "input_tokens": n}`;
 * - vLLM `POST /tokenize` (beside `/v1`): `messages` (through the chat template) or a `prompt`,
 *   answered `{"count", "max_model_len", "tokens"}`; a model whose server has no such endpoint
 *   (`sim-legacy`) gets the 404 of a route that is not there.
 * Each counts with the tokenizer the chat calls bill with, so a count is what the call then bills.
 * They do no work and bill nothing, so they are not in the ledger.
 */

/** The context window the simulated models report (vLLM's `max_model_len`). */
const MAX_MODEL_LEN = 32_768;

type Json = Record<string, unknown>;

async function readJson(req: IncomingMessage): Promise<Json | undefined> {
  try {
    const body = JSON.parse(await readBody(req)) as unknown;
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Json)
      : undefined;
  } catch {
    return undefined;
  }
}

async function anthropicCount(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req);
  if (!body) return providerError(res, 'messages', 400, 'The request body must be a JSON object.');
  // The messages request's own rules, but for the cap, which a count does not take.
  const parsed = parseAnthropicRequest({ ...body, max_tokens: 1 });
  if (isRefusal(parsed)) return providerError(res, 'messages', 400, parsed.message);
  if (!SIMULATOR_MODELS.includes(parsed.model))
    return providerError(res, 'messages', 404, `model: ${parsed.model}`);
  sendJson(res, 200, { input_tokens: promptTokens(body) });
}

async function openAiInputTokens(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req);
  if (!body) return providerError(res, 'chat', 400, 'The request body must be a JSON object.');
  if (typeof body.model !== 'string' || !SIMULATOR_MODELS.includes(body.model))
    return providerError(
      res,
      'chat',
      404,
      `The model \`${String(body.model)}\` does not exist or you do not have access to it.`,
      { code: 'model_not_found' },
    );
  if (body.input === undefined)
    return providerError(res, 'chat', 400, "Missing required parameter: 'input'.", {
      param: 'input',
      code: 'missing_required_parameter',
    });
  sendJson(res, 200, { object: 'response.input_tokens', input_tokens: promptTokens(body) });
}

async function vllmTokenize(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req);
  const model = body?.model;
  if (typeof model === 'string' && SIMULATOR_MODELS.includes(model) && !countsTokens(model))
    return sendJson(res, 404, { detail: 'Not Found' });
  if (!body || (!Array.isArray(body.messages) && typeof body.prompt !== 'string'))
    return vllmError(res, 400, 'Either `messages` or `prompt` is required.');
  if (typeof model !== 'string' || !SIMULATOR_MODELS.includes(model))
    return vllmError(res, 404, `The model \`${String(model)}\` does not exist.`);
  const count = promptTokens(body);
  // Token ids are not meaningful here; their number is.
  const tokens = Array.from({ length: count }, (_, i) => 100 + (i % 30_000));
  sendJson(res, 200, { count, max_model_len: MAX_MODEL_LEN, tokens, token_strs: null });
}

/** vLLM's error body: `{"object": "error", "message", "type", "param", "code"}`. */
function vllmError(res: ServerResponse, status: number, message: string): void {
  const type = status === 404 ? 'NotFoundError' : 'BadRequestError';
  sendJson(res, status, { object: 'error', message, type, param: null, code: status });
}

export function countRoutes(): Routes {
  return (route) => {
    if (route === 'POST /v1/messages/count_tokens') return anthropicCount;
    if (route === 'POST /v1/responses/input_tokens') return openAiInputTokens;
    if (route === 'POST /tokenize') return vllmTokenize;
    return undefined;
  };
}
