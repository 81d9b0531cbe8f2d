import { FAILURES } from '../src/domain/failures';
import type { AttemptState } from '../src/domain/job';
import type { AttemptSummary, JobPlan, PlannedProvider } from '../src/workflows/definitions';
import {
  anotherAttemptPossible,
  attemptRequestRefusal,
  chooseNextAttempt,
  exhaustedFailure,
  firstReconcileDelayMs,
  nextReconcileDelayMs,
  reconcileWaitMs,
  resolutionRefusal,
  resumePosition,
  settledMeanwhileRefusal,
  shouldContinueAsNew,
  type JobView,
} from '../src/workflows/policy';

/** The attempt policy on its own: plain functions, no Temporal, no database. */
const provider = (name: string, extra: Partial<PlannedProvider> = {}): PlannedProvider => ({
  name,
  timeoutMs: 1_000,
  heartbeatTimeoutMs: 1_000,
  sideEffects: false,
  ...extra,
});

function plan(extra: Partial<JobPlan> = {}): JobPlan {
  const providers = [provider('a'), provider('b')];
  return {
    jobId: 'job-1',
    requestFingerprint: 'f',
    type: 'summarize',
    mode: 'exclusive',
    providers,
    compatible: [
      ...providers,
      provider('c'),
      provider('pay', { sideEffects: true }),
      provider('new', { uncertified: 'not certified for contract v2' }),
    ],
    hedgeDelayMs: 2_000,
    skipped: [],
    terminalStatus: null,
    completedBy: null,
    attempts: [],
    maxAttempts: 4,
    historyEventLimit: 10_000,
    reconcileMaxDelayMs: 8_000,
    ...extra,
  };
}

const attempt = (seq: number, state: AttemptState, name = 'a'): AttemptSummary => ({
  attemptId: `job-1:${seq}`,
  seq,
  provider: name,
  state,
});

const view = (extra: Partial<JobView> = {}): JobView => ({
  jobId: 'job-1',
  plan: plan(),
  terminal: null,
  attempts: [],
  requestWaiting: false,
  ...extra,
});

describe('a user’s "try again"', () => {
  test('is served when nothing is in flight and a certified compatible provider is named', () => {
    expect(attemptRequestRefusal(view({ attempts: [attempt(1, 'failed')] }), {})).toBeUndefined();
    expect(attemptRequestRefusal(view(), { provider: 'c' })).toBeUndefined();
  });

  test.each(['starting', 'running', 'unknown'] as const)(
    'is refused in exclusive mode while an attempt is %s, naming it',
    (state) => {
      const blocking = attempt(1, state);
      expect(attemptRequestRefusal(view({ attempts: [blocking] }), {})).toEqual({
        type: FAILURES.attemptInFlight,
        message: `attempt 1 on a is ${state}`,
        details: blocking,
      });
    },
  );

  test('is served beside a running attempt in hedged mode, but not beside a waiting request', () => {
    const hedged = view({ plan: plan({ mode: 'hedged' }), attempts: [attempt(1, 'running')] });
    expect(attemptRequestRefusal(hedged, {})).toBeUndefined();
    expect(attemptRequestRefusal({ ...hedged, requestWaiting: true }, {})).toMatchObject({
      type: FAILURES.attemptInFlight,
      message: 'an attempt is about to start',
    });
  });

  test('is refused before admission and after the job ended', () => {
    expect(attemptRequestRefusal(view({ plan: undefined }), {})?.type).toBe(
      FAILURES.attemptInFlight,
    );
    expect(attemptRequestRefusal(view({ terminal: 'succeeded' }), {})).toEqual({
      type: FAILURES.jobTerminal,
      message: 'job job-1 is succeeded',
    });
  });

  test('is refused at the attempt cap, with the cap', () => {
    const attempts = [1, 2, 3, 4].map((seq) => attempt(seq, 'failed'));
    expect(attemptRequestRefusal(view({ attempts }), {})).toEqual({
      type: FAILURES.attemptLimitReached,
      message: 'job job-1 has had 4 attempts, the most a job may have',
      details: { maxAttempts: 4 },
    });
  });

  test('names a provider that cannot run the job, is not certified, or has side effects in a hedged job', () => {
    expect(attemptRequestRefusal(view(), { provider: 'nope' })?.type).toBe(
      FAILURES.unknownProvider,
    );
    expect(attemptRequestRefusal(view(), { provider: 'new' })).toEqual({
      type: FAILURES.providerNotCertified,
      message: 'provider new may not run this job: not certified for contract v2',
    });
    expect(attemptRequestRefusal(view(), { provider: 'pay' })).toBeUndefined();
    expect(
      attemptRequestRefusal(view({ plan: plan({ mode: 'hedged' }) }), { provider: 'pay' })?.type,
    ).toBe(FAILURES.hedgingNotAllowed);
  });
});

describe('an operator’s resolution', () => {
  test('is accepted for an attempt in flight, and needs the result to resolve as succeeded', () => {
    const attempts = [attempt(1, 'unknown')];
    expect(
      resolutionRefusal(attempts, { attemptId: 'job-1:1', outcome: 'failed' }),
    ).toBeUndefined();
    expect(
      resolutionRefusal(attempts, { attemptId: 'job-1:1', outcome: 'succeeded', result: {} }),
    ).toBeUndefined();
    expect(
      resolutionRefusal(attempts, { attemptId: 'job-1:1', outcome: 'succeeded' }),
    ).toMatchObject({ type: FAILURES.attemptNotResolvable });
  });

  test('is refused for a settled attempt, or one of another job', () => {
    expect(
      resolutionRefusal([attempt(1, 'failed')], { attemptId: 'job-1:1', outcome: 'failed' }),
    ).toEqual({
      type: FAILURES.attemptNotResolvable,
      message: 'attempt job-1:1 is failed; only an unknown attempt can be resolved',
    });
    expect(
      resolutionRefusal([attempt(1, 'unknown')], { attemptId: 'job-2:1', outcome: 'failed' })
        ?.message,
    ).toMatch(/not an attempt of this job/);
  });

  test('waited for a running call, and is refused if the call settled it meanwhile', () => {
    expect(settledMeanwhileRefusal(attempt(1, 'unknown'))).toBeUndefined();
    expect(settledMeanwhileRefusal(attempt(1, 'succeeded'))?.message).toBe(
      'attempt job-1:1 settled as succeeded meanwhile; only an unknown attempt can be resolved',
    );
  });
});

describe('the next attempt', () => {
  test('follows the plan, then there is none', () => {
    expect(chooseNextAttempt(plan(), 0, 0)).toEqual({ provider: provider('a'), nextInPlan: 1 });
    expect(chooseNextAttempt(plan(), 1, 1)).toEqual({ provider: provider('b'), nextInPlan: 2 });
    expect(chooseNextAttempt(plan(), 2, 2)).toEqual({ provider: undefined, nextInPlan: 3 });
  });

  test('a user’s named provider runs without moving the plan on; "the next one" moves it', () => {
    expect(chooseNextAttempt(plan(), 1, 1, { provider: 'c' })).toEqual({
      provider: provider('c'),
      nextInPlan: 1,
    });
    expect(chooseNextAttempt(plan(), 1, 1, {})).toEqual({ provider: provider('b'), nextInPlan: 2 });
  });

  test('a request nobody can serve is refused; at the cap nothing runs and a request is refused', () => {
    expect(chooseNextAttempt(plan(), 2, 2, {})).toEqual({
      nextInPlan: 3,
      refusal: { type: FAILURES.unknownProvider, message: 'no provider is left to try' },
    });
    expect(chooseNextAttempt(plan(), 4, 0)).toEqual({ nextInPlan: 0 });
    expect(chooseNextAttempt(plan(), 4, 0, { provider: 'c' })).toEqual({
      nextInPlan: 0,
      refusal: {
        type: FAILURES.attemptLimitReached,
        message: 'the job has had 4 attempts, the most a job may have',
      },
    });
  });

  test('a hedged job may start another while the plan or a request offers one, under the cap', () => {
    expect(anotherAttemptPossible(plan(), 1, 1, false)).toBe(true);
    expect(anotherAttemptPossible(plan(), 2, 2, false)).toBe(false);
    expect(anotherAttemptPossible(plan(), 2, 2, true)).toBe(true);
    expect(anotherAttemptPossible(plan(), 4, 0, true)).toBe(false);
  });

  test('a new run of a job goes on after the last provider that earlier runs used', () => {
    const providers = plan().providers;
    expect(resumePosition(providers, [])).toBe(0);
    expect(resumePosition(providers, [attempt(1, 'failed', 'a')])).toBe(1);
    expect(resumePosition(providers, [attempt(1, 'failed', 'b')])).toBe(2);
    // A user's extra provider is not in the plan: it does not move the plan on.
    expect(resumePosition(providers, [attempt(1, 'failed', 'c')])).toBe(0);
  });
});

describe('waiting on an unknown attempt', () => {
  test('the backoff starts at the first delay (1 s for plans admitted before it existed) and doubles up to the longest', () => {
    expect(firstReconcileDelayMs(plan())).toBe(1_000);
    expect(firstReconcileDelayMs(plan({ reconcileFirstDelayMs: 250 }))).toBe(250);
    const delays = [1_000];
    for (let i = 0; i < 5; i++) delays.push(nextReconcileDelayMs(delays.at(-1)!, plan()));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  test('an activity may ask for a sooner look, never below 100 ms', () => {
    expect(reconcileWaitMs(4_000)).toBe(4_000);
    expect(reconcileWaitMs(4_000, 1_500)).toBe(1_500);
    expect(reconcileWaitMs(4_000, 9_000)).toBe(4_000);
    expect(reconcileWaitMs(4_000, 0)).toBe(100);
  });

  test('a run hands over when Temporal suggests it or at the history limit', () => {
    const p = plan({ historyEventLimit: 100 });
    expect(shouldContinueAsNew({ continueAsNewSuggested: false, historyLength: 99 }, p)).toBe(
      false,
    );
    expect(shouldContinueAsNew({ continueAsNewSuggested: false, historyLength: 100 }, p)).toBe(
      true,
    );
    expect(shouldContinueAsNew({ continueAsNewSuggested: true, historyLength: 1 }, p)).toBe(true);
  });
});

test('a job that ran out of providers fails with every failure, and says when uncertified ones were left', () => {
  const failures = [{ attemptId: 'job-1:1', code: 'http_400' }];
  expect(exhaustedFailure(plan(), failures)).toEqual({
    code: 'all_attempts_failed',
    attempts: failures,
  });
  const skipped = [{ provider: 'new', reason: 'not certified' }];
  expect(exhaustedFailure(plan({ skipped }), failures)).toEqual({
    code: 'no-certified-provider',
    type: '/problems/no-certified-provider',
    attempts: failures,
    skipped,
  });
});
