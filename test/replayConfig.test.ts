import { durationMs } from '../src/domain/durations';
import { notFoundGraceMs, type HttpProviderConfig } from '../src/providers/provider';
import { parseProviderConfigs } from '../src/providers/registry';
import { replayWindowOf } from '../src/providers/replay';

/** A replay lookup's window, and a lookup's lag, as a provider's config states them. */
const pay = {
  name: 'pay',
  kind: 'http',
  url: 'http://127.0.0.1:1/v1/charges',
  timeoutMs: 1_000,
  sideEffects: true,
};
const parsed = (extra: Record<string, unknown>) =>
  parseProviderConfigs(JSON.stringify([{ ...pay, ...extra }]))[0] as HttpProviderConfig;

test('a key window reads as the provider documents it ("24h") or in milliseconds', () => {
  expect(durationMs('24h')).toBe(86_400_000);
  expect(durationMs('90m')).toBe(5_400_000);
  expect(durationMs('1.5s')).toBe(1_500);
  expect(durationMs(250)).toBe(250);
  expect(() => durationMs('a day')).toThrow(/not a duration/);
  expect(replayWindowOf(parsed({ replay: { keyWindow: '24h', margin: '1h' } }))).toEqual({
    keyWindowMs: 86_400_000,
    marginMs: 3_600_000,
  });
});

test('a replay margin as long as the key window, or a window that is not a duration, is refused when the config is read', () => {
  expect(() => parsed({ replay: { keyWindow: '1h', margin: '1h' } })).toThrow(
    /replay.margin must be shorter than replay.keyWindow/,
  );
  expect(() => parsed({ replay: { keyWindow: 'a day', margin: '1h' } })).toThrow(/a duration/);
  expect(() => parsed({ replay: { keyWindow: '24h' } })).toThrow(/margin/);
  expect(() => parsed({ keyHeader: 'PayPal Request Id' })).toThrow(/a header name/);
  expect(parsed({ keyHeader: 'PayPal-Request-Id' })).toMatchObject({
    keyHeader: 'PayPal-Request-Id',
  });
});

test('a lookup that lags its writes waits out the lag on top of the grace before "no record" is believed', () => {
  expect(notFoundGraceMs(parsed({ notFoundGraceMs: 200 }))).toBe(200);
  expect(notFoundGraceMs(parsed({ notFoundGraceMs: 200, consistency: { lagMs: 60_000 } }))).toBe(
    60_200,
  );
});
