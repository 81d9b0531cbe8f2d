import { settledAfterCallOver, type AttemptRow } from '../src/chaos/invariants';

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
