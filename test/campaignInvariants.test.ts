import {
  believableAt,
  chargeKeysSentTwice,
  settledAfterCallOver,
  type AttemptRow,
} from '../src/chaos/invariants';
import { operatorsMayActAt } from '../src/chaos/settle';

/**
 * The fault campaign's own checks, on rows made up to sit on either side of their edges. Two
 * clean-clone campaign runs found the check stricter than the reconciler's rule: a chat attempt
 * whose worker was killed mid-call, failed as `call_gone` once its late-result window had
 * closed, was reported as failed "by a clock"; a charge attempt whose call's end was never
 * written (PostgreSQL was restarting) and that a status lookup twice found never processed,
 * after its window, was reported as settled "before its call had ended".
 */
const windows = { chat: { lateResultMs: 10_000, graceMs: 5_000 } };
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);

function gone(
  finishedMs: number,
  callEndedMs: number | null = null,
  code = 'call_gone',
): AttemptRow {
  return {
    id: 'j:1',
    job_id: 'j',
    provider: 'chat',
    state: 'failed',
    error: { code },
    started_at: at(0),
    call_ended_at: callEndedMs === null ? null : at(callEndedMs),
    finished_at: at(finishedMs),
  };
}

test('a side-effect-free attempt failed as call_gone passes invariant 5 only once its call could no longer answer', () => {
  // No end recorded (its worker died): the late-result window, then the grace.
  expect(settledAfterCallOver(gone(15_000), windows)).toBe(true);
  expect(settledAfterCallOver(gone(14_999), windows)).toBe(false);
  // Its end recorded: the grace after it.
  expect(settledAfterCallOver(gone(7_000, 2_000), windows)).toBe(true);
  expect(settledAfterCallOver(gone(6_999, 2_000), windows)).toBe(false);
  // A provider the campaign does not know, or an attempt that never started, is not this case.
  expect(settledAfterCallOver({ ...gone(60_000), provider: 'other' }, windows)).toBe(false);
  expect(settledAfterCallOver({ ...gone(60_000), started_at: null }, windows)).toBe(false);
});

test('an attempt failed as never processed passes invariant 5 only once its call could no longer land, recorded end or not', () => {
  expect(settledAfterCallOver(gone(15_000, null, 'never_processed'), windows)).toBe(true);
  expect(settledAfterCallOver(gone(14_999, null, 'never_processed'), windows)).toBe(false);
  // A call whose end was written after the attempt was settled: believed too early.
  expect(settledAfterCallOver(gone(15_000, 16_000, 'never_processed'), windows)).toBe(false);
});

test('operators come to a side-effect-free unknown attempt only once the service had its time to settle it', () => {
  const serviceTimeMs = 20_000;
  const started = { started_at: at(0), call_ended_at: null };
  // No end recorded: its start, the late-result window and the grace; then the service's time.
  expect(believableAt(started, windows.chat)).toBe(at(15_000).getTime());
  expect(operatorsMayActAt(believableAt(started, windows.chat), 0, serviceTimeMs)).toBe(
    at(35_000).getTime(),
  );
  // Its end recorded: the grace after it.
  expect(believableAt({ ...started, call_ended_at: at(2_000) }, windows.chat)).toBe(
    at(7_000).getTime(),
  );
  // Never started, or believable long before the settle step began (a restart may have just
  // ended with the traffic): the service's time counts from the settle step's start.
  expect(believableAt({ started_at: null, call_ended_at: null }, windows.chat)).toBe(-Infinity);
  expect(operatorsMayActAt(-Infinity, at(60_000).getTime(), serviceTimeMs)).toBe(
    at(80_000).getTime(),
  );
});

test('invariant 4 counts every charge request under a provider key, executed or not, and no status lookup', () => {
  const charge = (key: string) => ({ route: 'charge', idempotencyKey: key });
  const lookup = (key: string) => ({ route: 'charge-status', idempotencyKey: key });
  // Sent once each, whatever came of it, and looked up as often as anyone likes: no resend.
  expect(chargeKeysSentTwice([charge('j:1'), charge('j:2'), lookup('j:1'), lookup('j:1')])).toEqual(
    new Map(),
  );
  // The same attempt sent again: seen whether the provider answered it from its ledger or never
  // did the work at all (a dropped first request).
  expect(
    chargeKeysSentTwice([
      charge('j:1'),
      charge('k:1'),
      charge('j:1'),
      charge('k:1'),
      charge('k:1'),
    ]),
  ).toEqual(
    new Map([
      ['j:1', 2],
      ['k:1', 3],
    ]),
  );
});
