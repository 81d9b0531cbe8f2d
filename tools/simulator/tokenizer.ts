/**
 * The simulator's tokenizer, one for every route that counts: a chat call bills its prompt with
 * it, and the count endpoints (countRoutes.ts) answer with it, so that a count taken before a call
 * is exactly what the call then bills, as the real count endpoints promise.
 */

/** About four characters a token, as a rule of thumb for English. */
export function countTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Tokens of framing each message costs on top of its text (its role and separators). */
const MESSAGE_FRAMING = 3;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A message's or system prompt's text: a string, or the text of its text blocks. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((block): block is Json => isObject(block) && typeof block.text === 'string')
    .map((block) => String(block.text ?? ''))
    .join('');
}

/**
 * The whole prompt of a request as the model reads it: the system prompt (Anthropic's `system`,
 * the Responses API's `instructions`), every message with its framing (`messages`, or the
 * Responses API's `input`; a vLLM `prompt`), and the tools the model is offered with their
 * schemas (Anthropic renders them into the prompt). A schema the server enforces by decoding
 * (OpenAI's `response_format`) is not part of the prompt here. Any protocol's body.
 */
export function promptTokens(body: Json): number {
  const input = typeof body.input === 'string' ? [{ content: body.input }] : body.input;
  const messages = [body.messages, input].find(Array.isArray) ?? [];
  const parts = [
    textOf(body.system),
    textOf(body.instructions),
    typeof body.prompt === 'string' ? body.prompt : '',
    ...messages.map((m) => (isObject(m) ? textOf(m.content) : '')),
  ];
  if (body.tools !== undefined) parts.push(JSON.stringify(body.tools));
  return countTokens(parts.join('')) + MESSAGE_FRAMING * messages.length;
}
