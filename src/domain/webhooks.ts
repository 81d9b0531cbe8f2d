import { parseRetryAfter } from './retries';

/**
 * Completion webhooks: the events a job sends its owner's endpoints, and how their delivery is
 * retried. Pure, so the workflow and the API share it (migration 0016 holds the same list).
 */

export const WEBHOOK_EVENTS = [
  'job.succeeded',
  'job.failed',
  'job.cancelled',
  'job.needs_operator',
  'job.late_result',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'abandoned'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * How a job's deliveries are retried: a try every `initialIntervalMs`, doubling up to
 * `maximumIntervalMs`, for `giveUpAfterMs` in all; then what is left is marked failed.
 */
export interface WebhookRetry {
  initialIntervalMs: number;
  maximumIntervalMs: number;
  giveUpAfterMs: number;
}

/**
 * What a delivery's key is: the ending, or the attempt it is about (one that needs an operator,
 * one whose result came after its job ended without one; migration 0018 writes those itself).
 */
export function deliveryEventKey(event: WebhookEvent, attemptId?: string): string {
  return (event === 'job.needs_operator' || event === 'job.late_result') && attemptId
    ? `${event}:${attemptId}`
    : event;
}

/** The child workflow that delivers one event of one job (its id makes a second start a no-op). */
export function webhookWorkflowId(jobId: string, eventKey: string): string {
  return `webhooks/${jobId}/${eventKey}`;
}

/** When an endpoint's breaker opens, and for how long it holds (DEFAULTS.webhookBreaker). */
export interface WebhookBreaker {
  /** Tries in a row not answered 2xx that open it. */
  failures: number;
  /** Its first hold; each probe that fails doubles it. */
  firstHoldMs: number;
  /** The longest hold, also of a receiver's Retry-After. */
  longestHoldMs: number;
}

/** Statuses by which a receiver asks for time (Standard Webhooks: slow down, then retry). */
const ASKING_FOR_TIME = new Set([429, 502, 503, 504]);

/**
 * How long nothing more goes to an endpoint after a try it did not answer 2xx, its `failures`
 * in a row counted with this one; undefined: the sender's backoff alone paces it. A receiver
 * asking for time (429, 502, 503, 504) with a Retry-After gets that time; a breaker open after
 * `failures` tries holds longer with each probe that fails, with a fifth of jitter so that
 * endpoints held together do not all come back at once. `random` is in [0, 1).
 */
export function webhookHoldMs(
  failures: number,
  answer: { status: number | null; retryAfterMs?: number },
  breaker: WebhookBreaker,
  random: number,
): number | undefined {
  const asked =
    answer.status !== null &&
    ASKING_FOR_TIME.has(answer.status) &&
    answer.retryAfterMs !== undefined
      ? Math.min(breaker.longestHoldMs, answer.retryAfterMs)
      : undefined;
  const open =
    failures >= breaker.failures
      ? Math.min(breaker.longestHoldMs, breaker.firstHoldMs * 2 ** (failures - breaker.failures)) *
        (0.9 + 0.2 * random)
      : undefined;
  if (asked === undefined && open === undefined) return undefined;
  return Math.round(Math.max(asked ?? 0, open ?? 0));
}

/**
 * The wait before a sender's next round: its backoff (doubling from the first wait up to the
 * longest), with a fifth of jitter so that senders that failed together spread out, and not
 * before the hold of an endpoint the round found held ends, or the longest wait has passed.
 * `random` is in [0, 1).
 */
export function nextRoundDelayMs(
  round: number,
  retry: Pick<WebhookRetry, 'initialIntervalMs' | 'maximumIntervalMs'>,
  heldForMs: number | undefined,
  random: number,
): number {
  const backoff = Math.min(retry.maximumIntervalMs, retry.initialIntervalMs * 2 ** (round - 1));
  // A long hold is looked at again at the longest wait: an operator may have lifted it.
  const held = Math.min(heldForMs ?? 0, retry.maximumIntervalMs);
  return Math.round(Math.max(backoff * (0.9 + 0.2 * random), held));
}

/**
 * A Retry-After header in milliseconds (seconds, or an HTTP date), when it says something
 * usable: never negative, and never more than `atMostMs`.
 */
export function retryAfterMs(header: string | undefined, nowMs: number, atMostMs: number) {
  if (header === undefined) return undefined;
  const text = header.trim();
  // Whole seconds, or an HTTP date (every form of which starts with the day's name); the rest,
  // a negative number say, says nothing usable. Read as the providers' Retry-After is read.
  if (!/^\d{1,10}$/.test(text) && !/^[A-Za-z]{3}/.test(text)) return undefined;
  const ms = parseRetryAfter({ get: (name) => (name === 'retry-after' ? text : null) }, nowMs);
  return ms === undefined ? undefined : Math.min(atMostMs, ms);
}

/** How name resolution for webhook receivers is bounded (ONEJOB_WEBHOOK_DNS_*). */
export interface WebhookNameSettings {
  /** Name servers to ask (`host` or `host:port`); unset: the system's (/etc/resolv.conf). */
  servers?: string[];
  /** The whole resolution of one name gives up after this long. */
  timeoutMs: number;
}
