/**
 * The retry table: which failed attempts are tried again on the same provider, before the plan
 * moves on. It reads only attempts that their own call settled `failed`: the certainty table
 * (certainty.ts) has already decided that, so an outcome that may have taken effect twice never
 * gets here (it is `unknown`, and blocks).
 *
 * | the call's failure                                              | retried on the same provider |
 * | --------------------------------------------------------------- | ---------------------------- |
 * | `429` (rate limited), with or without `Retry-After`             | yes                          |
 * | `503`, `529` (overloaded), `408`                                | yes (1)                      |
 * | unreachable: connection refused, DNS, no route                  | yes (nothing was sent)       |
 * | never sent: the call never began (its worker was lost before it, | yes, even where the provider |
 * | or its begin waited past Temporal's timeout)                     | has no retries (2)           |
 * | `500`, `502`, `504`, a dropped or reset connection, a timeout   | yes (1)                      |
 * | no whole answer before the late-result window closed            | yes (1) (3)                  |
 * | any other `4xx` (`400`, `401`, `403`, `404`, `409`, `422`, …)   | no: it would fail the same way |
 * | an answer that breaks the contract (or too large)               | no: that is the fallback's job |
 * | settled later: "never processed", a callback, an operator       | no: the plan moves on        |
 * | the provider said `x-should-retry: false`                       | no                           |
 *
 * (1) These may have taken effect, so they end `failed` only for a provider and job type free of
 * side effects; with side effects they are `unknown` and never reach this table.
 * (2) Nothing reached the provider: it was not tried. Its own retries (`retry: false`, tries
 * spent) do not apply; the job's attempt cap bounds these too. (retryPolicy.ts retryAfterFailure)
 * (3) A hang is a timeout that lasted: the provider is unwell, and the breaker counts it too.
 *
 * The wait: the provider's `Retry-After` (or `retry-after-ms`) when it gave one, capped at the
 * provider's longest wait; else exponential backoff with full jitter. Each retry is an attempt of
 * its own (its own idempotency key), and the job's attempt cap bounds them all.
 */

/** How a provider's failed attempts are retried on it. */
export interface RetrySettings {
  /** Tries on this provider in a row, the first included, before the plan moves on. */
  maxAttempts: number;
  /** The first backoff's upper bound; it doubles for each further try. */
  initialDelayMs: number;
  /** The longest wait, also for a `Retry-After`. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
  maxAttempts: 3,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};

/** A provider's settings from its config: `false` opts out, a partial object fills in the rest. */
export function retrySettings(
  configured: Partial<RetrySettings> | false | undefined,
): RetrySettings | false {
  if (configured === false) return false;
  return { ...DEFAULT_RETRY, ...configured };
}

/** A call cut off when its late-result window closed, with no whole answer (providerCallRequest.ts). */
export const LATE_WINDOW_EXCEEDED = 'late_window_exceeded';

/**
 * Failures that say the provider is unwell rather than the request wrong: retried here, and
 * counted by the circuit breaker (breaker.ts). `429` and `unreachable` are refused before any
 * work; the rest are overload or the connection, retried once the certainty table said `failed`.
 */
export const HEALING_FAILURE_CODES: readonly string[] = [
  'http_429',
  'unreachable',
  'http_408',
  'http_500',
  'http_502',
  'http_503',
  'http_504',
  'http_529',
  'connection',
  'timeout',
  'unreadable',
  LATE_WINDOW_EXCEEDED,
];
const HEALING = new Set(HEALING_FAILURE_CODES);

/** What a failed attempt's record says of its call (the attempt's `error`). */
export interface FailedCall {
  code?: unknown;
  httpStatus?: unknown;
  provider?: { shouldRetry?: unknown; retryAfterMs?: unknown };
}

export type RetryVerdict = { retry: true; reason: string } | { retry: false; reason: string };

/**
 * An attempt abandoned before its call began (`never_sent`, attemptSettlement.ts): nothing reached
 * the provider, and nothing can any more (a begin needs a `starting` attempt). Retried like a
 * failure that may heal, but no news about the provider: the breaker never counts it.
 */
export const NEVER_SENT = 'never_sent';

/** The table's answer for one failed call. */
export function retryVerdict(failure: FailedCall): RetryVerdict {
  const code = typeof failure.code === 'string' ? failure.code : 'unknown';
  if (failure.provider?.shouldRetry === false)
    return { retry: false, reason: 'the provider said x-should-retry: false' };
  if (HEALING.has(code) || code === NEVER_SENT)
    return { retry: true, reason: describeFailure(failure) };
  return { retry: false, reason: `${describeFailure(failure)} is not retried` };
}

/** How many of the latest attempts, counting back from the last, went to `provider` in a row. */
export function consecutiveTries(
  attempts: readonly { provider: string }[],
  provider: string,
): number {
  let tries = 0;
  for (let i = attempts.length - 1; i >= 0 && attempts[i]!.provider === provider; i--) tries += 1;
  return tries;
}

/**
 * Whether the job's attempt cap has room for one more retry beside one attempt for each provider
 * of the plan not yet tried: retries never starve a fallback.
 */
export function retryFitsCap(attemptsMade: number, untriedProviders: number, cap: number): boolean {
  return attemptsMade + 1 + untriedProviders <= cap;
}

/** `429` or `unreachable`: the failure in one word. */
export function failureCause(failure: FailedCall): string {
  if (typeof failure.httpStatus === 'number') return String(failure.httpStatus);
  return typeof failure.code === 'string' ? failure.code : 'failure';
}

/** `429, Retry-After 2` or `unreachable`: the failure as the job's details name it. */
export function describeFailure(failure: FailedCall): string {
  const name = failureCause(failure);
  const after = retryAfterOf(failure);
  return after === undefined ? name : `${name}, Retry-After ${formatSeconds(after)}`;
}

function retryAfterOf(failure: FailedCall): number | undefined {
  const ms = failure.provider?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** `2`, `0.5`, `30`: seconds as a person reads them. */
export function formatSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/**
 * The wait before try `nextTry` (2 for the first retry): the provider's `Retry-After` capped at
 * the longest wait, else a random wait up to the doubling bound (full jitter). `random` is
 * Math.random, which a workflow replays deterministically.
 */
export function retryDelayMs(
  settings: RetrySettings,
  failure: FailedCall,
  nextTry: number,
  random: () => number,
): number {
  const after = retryAfterOf(failure);
  if (after !== undefined) return Math.min(after, settings.maxDelayMs);
  const bound = Math.min(settings.maxDelayMs, settings.initialDelayMs * 2 ** (nextTry - 2));
  return Math.max(1, Math.floor(random() * bound));
}

/**
 * A `Retry-After` (RFC 9110 10.2.3: delay seconds or an HTTP date) or OpenAI's `retry-after-ms`,
 * in milliseconds from `now`; undefined when absent or unreadable.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null },
  now: number,
): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
