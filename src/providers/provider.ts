import { breakerSettings, DEFAULT_BREAKER, type BreakerSettings } from '../domain/breaker';
import type { Money, TokenUsage } from '../domain/cost';
import { DEFAULTS } from '../domain/defaults';
import type { RetrySettings } from '../domain/retries';
import type { AnyJobTypeContract } from '../jobTypes';
import type { ReplayLookup, ReplayLookupConfig } from './replay';

export type { Money, TokenUsage };

interface CommonProviderConfig {
  name: string;
  /** Attempt timeout: past it the attempt is `unknown`, never `failed`. */
  timeoutMs: number;
  /**
   * The whole call's bound, body included: how long it may keep running after the attempt
   * timed out, so that a late answer can still be recorded (and lose or win the
   * compare-and-swap). Past it the request is aborted. Default: 10 × timeoutMs, at most 10 min.
   */
  lateResultTimeoutMs?: number;
  /**
   * After the original call ended (or could no longer be running), how long a status lookup's
   * "never processed" is still not believed: a provider may register a key a little after it
   * answers or drops. Default 5 s.
   */
  notFoundGraceMs?: number;
  /** True when a call may do something in the world (charge, write) besides answering. */
  sideEffects: boolean;
  /**
   * Name of the environment variable with the HMAC secret for this provider's result callbacks;
   * its own: no two providers may name the same variable or hold the same secret.
   */
  callbackSecretEnv?: string;
  /**
   * The largest answer body read from this provider, in bytes; a larger one is cut off unread
   * past it (`response_too_large`). Default DEFAULT_MAX_RESPONSE_BYTES.
   */
  maxResponseBytes?: number;
  /**
   * How failed attempts are retried on this provider before the plan moves on (the retry table,
   * domain/retries.ts); `false` never retries here. Default DEFAULT_RETRY: 3 tries, 500 ms, 30 s.
   */
  retry?: Partial<RetrySettings> | false;
  /**
   * Its circuit breaker (domain/breaker.ts), shared by every worker; `false` turns it off.
   * Default DEFAULT_BREAKER: open after 5 failures in a row or half of 100 calls in 60 s, probe
   * after 30 s.
   */
  breaker?: Partial<BreakerSettings> | false;
}

/** How much of a provider's answer is read when its config names no cap: 10 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface ChatModelConfig {
  model: string;
  /** Name of the environment variable holding the API key; the key itself never sits in config. */
  apiKeyEnv?: string;
  /** The model's context window in tokens, checked by certification. */
  contextWindow?: number;
  /** Tokens reserved for the answer, sent as the output cap. Default: DEFAULTS.maxOutputTokens. */
  maxOutputTokens?: number;
  /**
   * Sampling temperature sent with every call; `null` sends none (the server's default).
   * Default: 0 for OpenAI-compatible servers (steadiest answers), none for Anthropic (the forced
   * tool call pins the format). Reasoning models refuse any value but their default: set `null`.
   */
  temperature?: number | null;
  /** What the model's tokens cost; without it, calls to this provider have an unknown cost. */
  price?: TokenPrice;
  /**
   * Whether certification's output-cap probe must pass: `required` (the default), or `advisory`
   * for a server known to ignore output caps (a test double): the probe is still run and
   * reported, but a server that writes past the cap is certified all the same.
   */
  capProbe?: 'required' | 'advisory';
}

/** A model's price list, per million tokens. */
export interface TokenPrice {
  /** ISO 4217 code, e.g. `USD`. */
  currency: string;
  inputPerMillion: number;
  outputPerMillion: number;
  /** Input read from the provider's prompt cache. Default: the input price. */
  cachedInputPerMillion?: number;
  /** Input written to the prompt cache (Anthropic's 5-minute writes). Default: the input price. */
  cacheWritePerMillion?: number;
  /** Input written to the cache for an hour (Anthropic's 1-hour writes). Default: cacheWritePerMillion. */
  cacheWrite1hPerMillion?: number;
}

/** Where an HTTP provider's answer says what the call cost. */
export interface ReportedCostField {
  /** JSON pointer (RFC 6901) into the answer's body, e.g. `/fee`. */
  pointer: string;
  /** ISO 4217 code of the amount. */
  currency: string;
  /** The amount's units per currency unit: 100 for cents. Default 1. */
  unitsPerCurrencyUnit?: number;
}

export interface OpenAiCompatibleConfig extends CommonProviderConfig, ChatModelConfig {
  kind: 'openai-compatible';
  /** Base URL of the API, including its version prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /**
   * How the output format is asked for: `json_schema` (structured outputs, strict), `json_object`
   * (JSON mode), or `prompt` (the prompt alone, for servers with neither). Default `json_schema`.
   */
  structuredOutput?: 'json_schema' | 'json_object' | 'prompt';
  /** js-tiktoken encoding for counting prompt tokens locally. Default `o200k_base`. */
  tokenizer?: 'o200k_base' | 'cl100k_base';
  /**
   * Which endpoint of the server counts a prompt's tokens for certification: `tokenize` (vLLM's
   * `POST /tokenize`, beside `/v1`), `input_tokens` (OpenAI's `POST /v1/responses/input_tokens`),
   * or `local` (js-tiktoken with `tokenizer`, an estimate for models that are not OpenAI's).
   * Default `local`. When the endpoint fails, the local count stands in, labelled an estimate.
   */
  tokenCount?: 'tokenize' | 'input_tokens' | 'local';
  /**
   * The name the output cap is sent under: `max_completion_tokens` (OpenAI's, the only one its
   * reasoning models take) or `max_tokens` (what servers that predate it know; they ignore the
   * other, leaving the answer uncapped). Default `max_completion_tokens`; certification probes it.
   */
  maxTokensParameter?: 'max_completion_tokens' | 'max_tokens';
}

/** The temperature a chat provider sends, or undefined for none. */
export function temperatureOf(
  config: OpenAiCompatibleConfig | AnthropicConfig,
): number | undefined {
  if (config.temperature === null) return undefined;
  return config.temperature ?? (config.kind === 'openai-compatible' ? 0 : undefined);
}

export interface AnthropicConfig extends CommonProviderConfig, ChatModelConfig {
  kind: 'anthropic';
  /** Default: the SDK's (api.anthropic.com). */
  baseUrl?: string;
  /**
   * How certification counts a prompt's tokens: `count_tokens` (the API's
   * `POST /v1/messages/count_tokens`, the default) or `local` (an estimate, 3.5 characters a token).
   */
  tokenCount?: 'count_tokens' | 'local';
}

export interface HttpProviderConfig extends CommonProviderConfig {
  kind: 'http';
  /** Where the job input is POSTed as JSON, with the attempt id as Idempotency-Key. */
  url: string;
  /**
   * Status lookup by idempotency key; `{key}` is replaced. 200 with a JSON body = the record;
   * 404 with a JSON body = no record of the key (trusted only once the original call can no
   * longer land); anything else = unknown.
   */
  statusUrl?: string;
  /**
   * Search by idempotency key, for providers whose records are found by a search (Stripe's
   * `/v1/charges/search`); `{key}` is replaced. 200 with `{"data": [...]}`: the first item is the
   * record, an empty list is no record (believed as the status lookup's 404 is); anything else
   * = unknown.
   */
  searchUrl?: string;
  /**
   * How far the status lookup or search may lag the provider's writes (a search index): "no
   * record" is believed only once the call can no longer land and the grace and this lag have
   * passed since, said twice that far apart.
   */
  consistency?: { lagMs: number };
  /**
   * A lost answer looked up by sending the first request again, byte for byte, under the same
   * key, as the provider's idempotency allows inside its key window (Stripe: at least 24 h).
   * No replay begins at or after the first send plus `keyWindow` less `margin` (PostgreSQL
   * refuses it): after that, only the search or status lookup, a callback or an operator settles it.
   */
  replay?: ReplayLookupConfig;
  /** The header the idempotency key is sent under. Default `Idempotency-Key`. */
  keyHeader?: string;
  apiKeyEnv?: string;
  /** The field of a successful answer that holds the call's cost; without it, unknown. */
  cost?: ReportedCostField;
  /**
   * The most one call may cost (the provider's fee schedule at its dearest): the worst case a
   * budgeted owner's attempt reserves. Without it, a budgeted owner's attempt is refused.
   */
  maxCostPerCall?: Money;
}

export type ProviderConfig = OpenAiCompatibleConfig | AnthropicConfig | HttpProviderConfig;

export function lateResultTimeoutMs(config: ProviderConfig): number {
  return config.lateResultTimeoutMs ?? Math.min(config.timeoutMs * 10, 600_000);
}

export function maxResponseBytes(config: ProviderConfig): number {
  return config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
}

/** How long the provider's open breaker waits before it lets a probe through. */
export function breakerCoolOffMs(config: ProviderConfig): number {
  const settings = breakerSettings(config.breaker);
  return settings ? settings.coolOffMs : DEFAULT_BREAKER.coolOffMs;
}

/**
 * How long after a call can no longer land its provider's "no record" is still not believed (and
 * how far apart the two looks that believe it are): its grace, plus the lag of a lookup that
 * reads an index behind the provider's writes.
 */
export function notFoundGraceMs(config: ProviderConfig): number {
  const lagMs = config.kind === 'http' ? (config.consistency?.lagMs ?? 0) : 0;
  return (config.notFoundGraceMs ?? DEFAULTS.notFoundGraceMs) + lagMs;
}

/** The output cap a chat model's calls send, and certification reserves: maxOutputTokens. */
export function outputTokenCap(config: { maxOutputTokens?: number | undefined }): number {
  return config.maxOutputTokens ?? DEFAULTS.maxOutputTokens;
}

export interface ProviderRequest {
  /** Sent downstream as the idempotency key, so the provider can recognise a repeat. */
  attemptId: string;
  contract: AnyJobTypeContract;
  input: Record<string, unknown>;
  /**
   * Ends the whole call, body included, when the late-result window closes. Not fired by the
   * attempt timeout (the call goes on to bring a late answer) nor by a cancel (once sent, the
   * provider may do the work anyway, and its answer shows the race).
   */
  signal?: AbortSignal;
  /** An output cap for this call only, instead of the provider's (certification's cap probe). */
  maxOutputTokens?: number;
  /** The body's bytes, kept before they leave for the provider's replays (replayBytes). */
  body?: Uint8Array;
}

export interface ProviderResponse {
  /** The provider's answer as JSON, still unchecked: the contract decides whether it is acceptable. */
  output: unknown;
  usage?: TokenUsage;
  /** What the provider says the call cost (an HTTP provider's configured cost field). */
  cost?: Money;
}

/**
 * Why an answer is not usable as it stands, read from the provider's own stop reason first:
 * - `truncated`: it stopped at the output cap (`finish_reason: "length"`,
 *   `stop_reason: "max_tokens"`); whatever came is partial, even if it happens to parse;
 * - `refused`: the model declined (a `refusal` message, `stop_reason: "refusal"`);
 * - `format_ignored`: it answered, but not in the asked format (prose, no tool call);
 * - `no_content`: it answered nothing at all.
 */
export type ViolationKind = 'truncated' | 'refused' | 'format_ignored' | 'no_content';

/** The attempt error code for each kind of unusable answer. */
export const VIOLATION_CODES: Record<ViolationKind, string> = {
  truncated: 'output_truncated',
  refused: 'model_refused',
  format_ignored: 'format_ignored',
  no_content: 'no_content',
};

/** The provider answered, but nothing usable: the raw text is kept for inspection. */
export class ContractViolation extends Error {
  constructor(
    message: string,
    readonly rawOutput: unknown,
    readonly kind: ViolationKind = 'format_ignored',
    readonly usage?: TokenUsage,
  ) {
    super(message);
    this.name = 'ContractViolation';
  }
}

/** What a provider says about an attempt when asked later, by its idempotency key. */
export type StatusLookup =
  | { state: 'succeeded'; output: unknown }
  /**
   * The provider says it has no record of the key. Evidence of "never processed" only once the
   * original call can no longer land (see reconcileAttempt).
   */
  | { state: 'not_found' }
  | { state: 'unknown'; detail: string };

export interface Provider {
  readonly config: ProviderConfig;
  call(request: ProviderRequest): Promise<ProviderResponse>;
  /** Present when the provider can be asked about an attempt after the fact. */
  lookupStatus?(attemptId: string): Promise<StatusLookup>;
  /** Present when a lost answer is looked up by sending the same request again (`replay`). */
  readonly replay?: ReplayLookup;
  /** Present when the provider counts a request's prompt tokens itself (config `tokenCount`). */
  countTokens?(request: ProviderRequest): Promise<ProviderTokenCount>;
}

/** A request's prompt tokens as the provider's own tokenizer counts them, and who counted. */
export interface ProviderTokenCount {
  tokens: number;
  /** The endpoint that counted, e.g. `POST /v1/messages/count_tokens`. */
  endpoint: string;
}

/** The model a provider serves, as certifications are keyed (HTTP providers have none). */
export function providerModel(config: ProviderConfig): string {
  return config.kind === 'http' ? '-' : config.model;
}
