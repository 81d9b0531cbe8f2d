import { nextRoundDelayMs, retryAfterMs, webhookHoldMs } from '../src/domain/webhooks';

/** The pure rules of webhook pacing: an endpoint's breaker, a receiver's Retry-After, jitter. */
const breaker = { failures: 5, firstHoldMs: 30_000, longestHoldMs: 1_800_000 };

test('an endpoint is held only from the breaker’s threshold on, each failed probe doubling the hold up to the longest, within a fifth of jitter', () => {
  for (let failures = 1; failures < breaker.failures; failures += 1)
    expect(webhookHoldMs(failures, { status: 500 }, breaker, 0.5)).toBeUndefined();
  expect(webhookHoldMs(5, { status: null }, breaker, 0.5)).toBe(30_000);
  expect(webhookHoldMs(6, { status: 500 }, breaker, 0.5)).toBe(60_000);
  expect(webhookHoldMs(40, { status: 500 }, breaker, 0.5)).toBe(1_800_000);
  expect(webhookHoldMs(5, { status: 500 }, breaker, 0)).toBe(27_000);
  expect(webhookHoldMs(5, { status: 500 }, breaker, 0.999_999)).toBe(33_000);
});

test('a receiver asking for time (429, 502, 503, 504) with Retry-After is held that long, capped, even below the threshold; other statuses’ Retry-After are not a hold', () => {
  for (const status of [429, 502, 503, 504])
    expect(webhookHoldMs(1, { status, retryAfterMs: 120_000 }, breaker, 0.5)).toBe(120_000);
  expect(webhookHoldMs(1, { status: 429, retryAfterMs: 86_400_000 }, breaker, 0.5)).toBe(1_800_000);
  expect(webhookHoldMs(1, { status: 500, retryAfterMs: 120_000 }, breaker, 0.5)).toBeUndefined();
  expect(webhookHoldMs(1, { status: 429 }, breaker, 0.5)).toBeUndefined();
  // The longer of the two when both apply.
  expect(webhookHoldMs(5, { status: 503, retryAfterMs: 1_000 }, breaker, 0.5)).toBe(30_000);
});

test('Retry-After is read as seconds or as an HTTP date, never negative nor past the cap, and nonsense is ignored', () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  expect(retryAfterMs('120', now, 3_600_000)).toBe(120_000);
  expect(retryAfterMs(' 0 ', now, 3_600_000)).toBe(0);
  expect(retryAfterMs('Sun, 06 Dec 2026 12:01:00 GMT', now, 3_600_000)).toBe(60_000);
  expect(retryAfterMs('Sun, 06 Dec 2026 11:00:00 GMT', now, 3_600_000)).toBe(0);
  expect(retryAfterMs('99999999', now, 3_600_000)).toBe(3_600_000);
  expect(retryAfterMs('soon', now, 3_600_000)).toBeUndefined();
  expect(retryAfterMs('-5', now, 3_600_000)).toBeUndefined();
  expect(retryAfterMs(undefined, now, 3_600_000)).toBeUndefined();
});

test('a sender’s next round comes after its doubling backoff with a fifth of jitter, and not before a held endpoint’s hold ends or the longest wait has passed', () => {
  const retry = { initialIntervalMs: 5_000, maximumIntervalMs: 300_000 };
  expect(nextRoundDelayMs(1, retry, undefined, 0.5)).toBe(5_000);
  expect(nextRoundDelayMs(3, retry, undefined, 0.5)).toBe(20_000);
  expect(nextRoundDelayMs(30, retry, undefined, 0.5)).toBe(300_000);
  expect(nextRoundDelayMs(1, retry, undefined, 0)).toBe(4_500);
  expect(nextRoundDelayMs(1, retry, undefined, 0.999_999)).toBe(5_500);
  expect(nextRoundDelayMs(1, retry, 90_000, 0.5)).toBe(90_000);
  expect(nextRoundDelayMs(1, retry, -5, 0.5)).toBe(5_000);
  expect(nextRoundDelayMs(1, retry, 1_000_000, 0.5)).toBe(300_000);
});
