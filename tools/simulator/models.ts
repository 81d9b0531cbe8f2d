import type { Fault } from './faults';
import type { AskedFormat, ChatRequest, RequestRefusal } from './requestRules';
import { countTokens } from './tokenizer';

/**
 * The simulated models, served by both chat APIs: how each behaves (its profile), which request
 * parameters it refuses or ignores (its traits), and what it answers. Injected faults come
 * before a model's profile.
 */

/** A model's behaviour is one of the faults, applied to every request it serves. */
export type ModelProfile = Fault;

export const MODEL_PROFILES: Record<string, ModelProfile | undefined> = {
  'sim-steady': undefined,
  'sim-backup': undefined,
  'sim-hallucinates': { kind: 'extra_key' },
  'sim-prose': { kind: 'malformed_output' },
  'sim-wrongtypes': { kind: 'wrong_types' },
  'sim-slow': { kind: 'delay', ms: 2_000 },
  'sim-hangs': { kind: 'hang' },
  'sim-500-after': { kind: 'fail_after', status: 500 },
  'sim-drops': { kind: 'drop_after' },
  'sim-verbose': { kind: 'runs_long' },
  'sim-refuses': { kind: 'refuses' },
  'sim-overloaded': { kind: 'overloaded' },
  // Well-behaved answers; what sets them apart are their traits below.
  'sim-reasoning': undefined,
  'sim-legacy': undefined,
  // Its latency is drawn per request (see heavyTailDelayMs); the entry only names the model.
  'sim-heavytail': undefined,
  // Well-behaved until its drift begins, then it breaks a share of its answers (drift.ts).
  'sim-drifts': undefined,
};
export const SIMULATOR_MODELS = Object.keys(MODEL_PROFILES);

/**
 * The latency of 'sim-heavytail', as tail-latency studies describe real model APIs: mostly
 * log-normal around a median of 60 ms, and one request in 50 stuck for 2–4 s (a cold replica, a
 * queue behind a long request). Hedging exists for that rare tail.
 */
export function heavyTailDelayMs(random: () => number = Math.random): number {
  if (random() < 0.02) return 2_000 + random() * 2_000;
  // Box–Muller: a standard normal from two uniforms.
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.round(60 * Math.exp(0.5 * normal));
}

/** What a model does to every request it serves, drawn afresh for models whose latency varies. */
export function modelProfile(model: string): ModelProfile | undefined {
  if (model === 'sim-heavytail') return { kind: 'delay', ms: heavyTailDelayMs() };
  return MODEL_PROFILES[model];
}

/**
 * Parameters a model refuses or ignores, as real ones do: OpenAI's reasoning models refuse any
 * `temperature` but the default and the old `max_tokens`; servers that predate
 * `max_completion_tokens` (older OpenAI-compatible servers) ignore it, so nothing caps the answer,
 * and have no endpoint that counts tokens either.
 */
interface ModelTraits {
  onlyDefaultTemperature?: boolean;
  refusesMaxTokens?: boolean;
  ignoresMaxCompletionTokens?: boolean;
  /** Served by a server with no endpoint that counts tokens (no vLLM `/tokenize`). */
  countsNoTokens?: boolean;
}
const MODEL_TRAITS: Record<string, ModelTraits> = {
  'sim-reasoning': { onlyDefaultTemperature: true, refusesMaxTokens: true },
  'sim-legacy': { ignoresMaxCompletionTokens: true, countsNoTokens: true },
};

/** Whether this model's server has an endpoint that counts tokens. */
export function countsTokens(model: string): boolean {
  return MODEL_TRAITS[model]?.countsNoTokens !== true;
}

/** What this model refuses in a request it was sent, worded as OpenAI does. */
export function modelRefusal(request: ChatRequest): RequestRefusal | undefined {
  const traits = MODEL_TRAITS[request.model] ?? {};
  if (request.protocol !== 'openai') return undefined;
  if (
    traits.onlyDefaultTemperature &&
    request.temperature !== undefined &&
    request.temperature !== 1
  )
    return {
      status: 400,
      message: `Unsupported value: 'temperature' does not support ${request.temperature} with this model. Only the default (1) value is supported.`,
      param: 'temperature',
      code: 'unsupported_value',
    };
  if (traits.refusesMaxTokens && request.limits.max_tokens !== undefined)
    return {
      status: 400,
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      param: 'max_tokens',
      code: 'unsupported_parameter',
    };
  return undefined;
}

/** The output cap this model obeys, if any. */
export function outputCap(request: ChatRequest): number | undefined {
  const traits = MODEL_TRAITS[request.model] ?? {};
  const { max_tokens: maxTokens, max_completion_tokens: maxCompletionTokens } = request.limits;
  if (traits.ignoresMaxCompletionTokens) return maxTokens;
  return maxCompletionTokens ?? maxTokens;
}

function summariseText(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  const firstSentence = /^.*?[.!?।](\s|$)/u.exec(clean)?.[0]?.trim() ?? clean;
  const limit = Math.max(1, Math.min(200, clean.length - 1));
  return firstSentence.length <= limit ? firstSentence : `${clean.slice(0, limit - 1).trimEnd()}…`;
}

/** The last sentence, as a differently-minded model might choose. */
function summariseTail(text: string): string {
  const sentences = text
    .replace(/\s+/g, ' ')
    .trim()
    .match(/[^.!?।]+[.!?।]?/gu) ?? [text];
  const last = sentences[sentences.length - 1]!.trim();
  return last.length < text.trim().length ? last : summariseText(text);
}

/** Closes what a cut-off JSON text left open, as streaming parsers do; undefined if hopeless. */
export function partialJson(text: string): unknown {
  const closers: string[] = [];
  let inString = false;
  let escaped = false;
  for (const char of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') closers.push('}');
    else if (char === '[') closers.push(']');
    else if (char === '}' || char === ']') closers.pop();
  }
  let repaired = text.replace(/\\$/, '');
  if (inString) repaired += '"';
  repaired = repaired.replace(/[,:]\s*$/, '');
  repaired += closers.reverse().join('');
  try {
    return JSON.parse(repaired) as unknown;
  } catch {
    return undefined;
  }
}

/** A model's answer, before its API wraps it. */
export type Said =
  | {
      kind: 'answer';
      /** The structured answer (the tool input, or the parsed JSON), when it is JSON. */
      json: unknown;
      /** The text as written (JSON text or prose), possibly cut off at the cap. */
      text: string;
      /** Cut off at the output cap. */
      truncated: boolean;
      outputTokens: number;
    }
  | { kind: 'refusal'; text: string; outputTokens: number }
  /** Stopped by the provider's content filter, with what was written before it. */
  | { kind: 'filtered'; text: string; outputTokens: number };

/** Faults of the answer's form that a format the API enforces rules out. */
function formEnforced(format: AskedFormat, fault: ModelProfile): boolean {
  switch (format.kind) {
    case 'strict_schema':
      // Constrained decoding: valid JSON of exactly the schema's shape.
      return ['malformed_output', 'extra_key', 'wrong_types'].includes(fault.kind);
    case 'json_object':
    case 'loose_schema':
      return fault.kind === 'malformed_output';
    case 'forced_tool':
      // Always a call of the tool; its input is not checked against the schema.
      return fault.kind === 'malformed_output';
    case 'text':
      return false;
  }
}

/** The text as written, cut at the output cap the model obeys. */
function capped(request: ChatRequest, full: string, json: (cut: string) => unknown): Said {
  const cap = outputCap(request);
  if (cap === undefined || countTokens(full) <= cap)
    return {
      kind: 'answer',
      json: json(full),
      text: full,
      truncated: false,
      outputTokens: countTokens(full),
    };
  const cut = full.slice(0, cap * 4);
  return { kind: 'answer', json: json(cut), text: cut, truncated: true, outputTokens: cap };
}

/**
 * What a model says to a request. A model's own profile yields to what the API enforces (a
 * strict schema, a forced tool); a fault injected by a test does not, so tests can still make
 * a provider break its promise. The answer is cut at the output cap the model obeys.
 */
export function answer(
  request: ChatRequest,
  fault: ModelProfile | undefined,
  injected: boolean,
): Said {
  const effective = fault && !injected && formEnforced(request.format, fault) ? undefined : fault;
  if (effective?.kind === 'refuses') {
    const text = "I'm sorry, but I can't help with that request.";
    return { kind: 'refusal', text, outputTokens: countTokens(text) };
  }
  if (effective?.kind === 'empty_answer')
    return { kind: 'answer', json: null, text: '', truncated: false, outputTokens: 0 };
  // The backup model summarises differently, so tests can tell whose answer won.
  let summary =
    request.model === 'sim-backup' ? summariseTail(request.text) : summariseText(request.text);
  if (effective?.kind === 'content_filter') {
    const text = summary.slice(0, Math.ceil(summary.length / 2));
    return { kind: 'filtered', text, outputTokens: countTokens(text) };
  }
  if (effective?.kind === 'runs_long')
    summary = `${summary} ${'And there is more to say about it. '.repeat(2_000)}`.trim();
  // Asked for no format and not told to write JSON: plain prose, as a model writes it.
  if (request.format.kind === 'text' && !request.asksForJson)
    return capped(request, summary, () => null);
  let json: unknown;
  let prose: string | undefined;
  if (effective?.kind === 'malformed_output') prose = `Sure! Here is your summary: ${summary}`;
  else if (effective?.kind === 'extra_key') json = { summary, confidence: 0.97 };
  else if (effective?.kind === 'wrong_types') json = { summary: summary.length };
  else json = { summary };

  const full = prose ?? JSON.stringify(json);
  return capped(request, full, (written) => {
    if (prose !== undefined) return null;
    return written === full ? json : (partialJson(written) ?? {});
  });
}
