import { callGoneInTime, type AttemptRow } from '../src/chaos/invariants';

/**
 * The fault campaign's own checks, on rows made up to sit on either side of their edges. A
 * campaign run under load found the first of these missing: a chat attempt whose worker was
 * killed mid-call, failed as `call_gone` once its late-result window had closed, was reported as
 * failed "by a clock".
 */
const windows = { chat: { lateResultMs: 10_000, graceMs: 5_000 } };
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);

function gone(finishedMs: number, callEndedMs: number | null = null): AttemptRow {
  return {
    id: 'j:1',
    job_id: 'j',
    provider: 'chat',
    state: 'failed',
    error: { code: 'call_gone' },
    started_at: at(0),
    call_ended_at: callEndedMs === null ? null : at(callEndedMs),
    finished_at: at(finishedMs),
  };
}

test('a side-effect-free attempt failed as call_gone passes invariant 5 only once its call could no longer answer', () => {
  // No end recorded (its worker died): the late-result window, then the grace.
  expect(callGoneInTime(gone(15_000), windows)).toBe(true);
  expect(callGoneInTime(gone(14_999), windows)).toBe(false);
  // Its end recorded: the grace after it.
  expect(callGoneInTime(gone(7_000, 2_000), windows)).toBe(true);
  expect(callGoneInTime(gone(6_999, 2_000), windows)).toBe(false);
  // Another code, or a provider the campaign does not know, is not this case.
  expect(callGoneInTime({ ...gone(60_000), error: { code: 'timeout' } }, windows)).toBe(false);
  expect(callGoneInTime({ ...gone(60_000), provider: 'other' }, windows)).toBe(false);
});
