import { breakerOpens, breakerSettings, DEFAULT_BREAKER } from '../src/domain/breaker';

/** When a provider's circuit breaker opens, on its own: plain functions, no database. */
const settings = { ...DEFAULT_BREAKER, consecutiveFailures: 3, minimumCalls: 10, failureRate: 0.5 };
const calls = (latest: number, latestFailed: number, inWindow = 0, inWindowFailed = 0) => ({
  latest,
  latestFailed,
  inWindow,
  inWindowFailed,
});

test('the breaker opens after its number of failures in a row, and not before', () => {
  expect(breakerOpens(calls(3, 3), settings)).toBe('3 failures in a row');
  expect(breakerOpens(calls(3, 2), settings)).toBeUndefined();
  // A provider with fewer calls than the run has not failed that many times in a row.
  expect(breakerOpens(calls(2, 2), settings)).toBeUndefined();
});

test('the breaker opens at its failure rate once the window holds enough calls', () => {
  expect(breakerOpens(calls(3, 1, 10, 5), settings)).toBe('5 of 10 calls failed within 60 s');
  expect(breakerOpens(calls(3, 1, 10, 4), settings)).toBeUndefined();
  expect(breakerOpens(calls(3, 1, 9, 9), settings)).toBeUndefined();
});

test('a provider’s breaker settings: defaults fill in, and false turns it off', () => {
  expect(breakerSettings(undefined)).toEqual(DEFAULT_BREAKER);
  expect(breakerSettings({ coolOffMs: 5_000 })).toEqual({ ...DEFAULT_BREAKER, coolOffMs: 5_000 });
  expect(breakerSettings(false)).toBe(false);
});
