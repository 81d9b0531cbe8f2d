import { FAILURES } from '../src/domain/failures';
import type { AttemptState } from '../src/domain/job';
import {
  DEFAULT_RETRY,
  parseRetryAfter,
  retryDelayMs,
  retrySettings,
  retryVerdict,
} from '../src/domain/retries';
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
import { CURRENT_RETRY_RULES, retryAfterFailure } from '../src/workflows/retryPolicy';

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

describe('retries on the same provider', () => {
  const retrying = { maxAttempts: 3, initialDelayMs: 500, maxDelayMs: 30_000 };
  const retryPlan = (extra: Partial<JobPlan> = {}): JobPlan => {
    const providers = [provider('a', { retry: retrying }), provider('b', { retry: retrying })];
    return plan({ providers, compatible: providers, maxAttempts: 8, ...extra });
  };
  const half = (): number => 0.5;

  test.each([
    ['429', { code: 'http_429', httpStatus: 429 }],
    ['503', { code: 'http_503', httpStatus: 503 }],
    ['Anthropic’s 529', { code: 'http_529', httpStatus: 529 }],
    ['408', { code: 'http_408', httpStatus: 408 }],
    ['500 (failed only without side effects)', { code: 'http_500', httpStatus: 500 }],
    ['502', { code: 'http_502', httpStatus: 502 }],
    ['504', { code: 'http_504', httpStatus: 504 }],
    ['unreachable (refused, DNS)', { code: 'unreachable' }],
    ['a dropped connection (failed only without side effects)', { code: 'connection' }],
  ])('the retry table retries %s', (_name, failure) => {
    expect(retryVerdict(failure).retry).toBe(true);
  });

  test.each([
    ['400', { code: 'http_400', httpStatus: 400 }],
    ['401', { code: 'http_401', httpStatus: 401 }],
    ['403', { code: 'http_403', httpStatus: 403 }],
    ['404', { code: 'http_404', httpStatus: 404 }],
    ['422', { code: 'http_422', httpStatus: 422 }],
    ['a contract violation', { code: 'contract_violation' }],
    ['a truncated answer', { code: 'output_truncated' }],
    ['an answer over the cap', { code: 'response_too_large' }],
    ['"never processed" from a status lookup', { code: 'never_processed' }],
    ['an operator’s verdict', { code: 'operator' }],
    [
      'a 503 whose provider said x-should-retry: false',
      { code: 'http_503', httpStatus: 503, provider: { shouldRetry: false } },
    ],
  ])('the retry table never retries %s', (_name, failure) => {
    expect(retryVerdict(failure).retry).toBe(false);
  });

  test('Retry-After is read as seconds, as an HTTP date, and as OpenAI’s retry-after-ms', () => {
    const headers = (values: Record<string, string>) => ({
      get: (name: string) => values[name] ?? null,
    });
    const now = Date.parse('2026-12-02T10:00:00Z');
    expect(parseRetryAfter(headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(parseRetryAfter(headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 02 Dec 2026 10:00:07 GMT' }), now)).toBe(
      7_000,
    );
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 02 Dec 2026 09:00:00 GMT' }), now)).toBe(
      0,
    );
    expect(parseRetryAfter(headers({ 'retry-after-ms': '1250', 'retry-after': '2' }), now)).toBe(
      1_250,
    );
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({}), now)).toBeUndefined();
  });

  test('the wait is Retry-After capped at the longest wait, else full jitter under a doubling bound', () => {
    const failure = { code: 'http_429', provider: { retryAfterMs: 2_000 } };
    expect(retryDelayMs(retrying, failure, 2, half)).toBe(2_000);
    expect(
      retryDelayMs(retrying, { code: 'http_429', provider: { retryAfterMs: 90_000 } }, 2, half),
    ).toBe(30_000);
    // Without Retry-After: up to 500 ms before try 2, 1 s before try 3, never past 30 s.
    expect(retryDelayMs(retrying, { code: 'http_503' }, 2, () => 0.999)).toBeLessThan(500);
    expect(retryDelayMs(retrying, { code: 'http_503' }, 3, () => 0.999)).toBeLessThan(1_000);
    expect(retryDelayMs(retrying, { code: 'http_503' }, 3, () => 0.999)).toBeGreaterThan(500);
    expect(retryDelayMs(retrying, { code: 'http_503' }, 20, () => 0.999)).toBeLessThan(30_000);
    expect(retryDelayMs(retrying, { code: 'http_503' }, 2, () => 0)).toBeGreaterThanOrEqual(1);
  });

  test('a provider’s settings: defaults fill in, and false opts out', () => {
    expect(retrySettings(undefined)).toEqual(DEFAULT_RETRY);
    expect(retrySettings({ maxAttempts: 5 })).toEqual({ ...DEFAULT_RETRY, maxAttempts: 5 });
    expect(retrySettings(false)).toBe(false);
  });

  test('a failed attempt whose failure may heal is retried on its provider, with words for the job', () => {
    const attempts = [attempt(1, 'failed')];
    const failure = { code: 'http_429', httpStatus: 429, provider: { retryAfterMs: 2_000 } };
    expect(retryAfterFailure(retryPlan(), attempts, attempts[0]!, failure, half)).toMatchObject({
      provider: { name: 'a' },
      delayMs: 2_000,
      nextTry: 2,
      description: 'retrying a in 2 s (429, Retry-After 2)',
    });
  });

  test('retries end at the provider’s tries in a row, then the plan moves on and the next provider gets its own', () => {
    const failure = { code: 'http_503', httpStatus: 503 };
    const three = [attempt(1, 'failed'), attempt(2, 'failed'), attempt(3, 'failed')];
    expect(retryAfterFailure(retryPlan(), three, three[2]!, failure, half)).toBeUndefined();
    const moved = [...three, attempt(4, 'failed', 'b')];
    expect(retryAfterFailure(retryPlan(), moved, moved[3]!, failure, half)).toMatchObject({
      provider: { name: 'b' },
      nextTry: 2,
    });
  });

  test('a retry never takes the room a fallback needs: with a cap of 2 the second provider gets the second attempt', () => {
    const failure = { code: 'http_429', httpStatus: 429 };
    const one = [attempt(1, 'failed')];
    expect(retryAfterFailure(retryPlan({ maxAttempts: 2 }), one, one[0]!, failure, half)).toBe(
      undefined,
    );
    expect(
      retryAfterFailure(retryPlan({ maxAttempts: 3 }), one, one[0]!, failure, half),
    ).toMatchObject({ provider: { name: 'a' }, nextTry: 2 });
    // Once every provider of the plan was tried, the room left is the retries'.
    const both = [attempt(1, 'failed'), attempt(2, 'failed', 'b')];
    expect(
      retryAfterFailure(retryPlan({ maxAttempts: 3 }), both, both[1]!, failure, half),
    ).toMatchObject({ provider: { name: 'b' }, nextTry: 2 });
  });

  test('an attempt whose call never began is tried again on its provider, even one without retries or with its tries spent, within the job’s cap', () => {
    const neverSent = { code: 'never_sent' };
    const one = [attempt(1, 'failed')];
    // `retry: false` (no settings): the table's default waits.
    expect(retryAfterFailure(plan(), one, one[0]!, neverSent, half)).toMatchObject({
      provider: { name: 'a' },
      nextTry: 2,
      description: 'retrying a in 0.3 s (never_sent)',
    });
    const three = [attempt(1, 'failed'), attempt(2, 'failed'), attempt(3, 'failed')];
    expect(retryAfterFailure(retryPlan(), three, three[2]!, neverSent, half)).toMatchObject({
      provider: { name: 'a' },
      nextTry: 4,
    });
    expect(retryAfterFailure(plan({ maxAttempts: 1 }), one, one[0]!, neverSent, half)).toBe(
      undefined,
    );
    // A run recorded before the rule (no patch marker) moved on instead.
    const before = { ...CURRENT_RETRY_RULES, neverSentIsRetried: () => false };
    expect(retryAfterFailure(retryPlan(), one, one[0]!, neverSent, half, before)).toBe(undefined);
  });

  test('a call cut off when its late-result window closed, with no whole answer, is retried on its provider like a timeout; a run recorded before the rule moved on', () => {
    const cutOff = { code: 'late_window_exceeded' };
    const one = [attempt(1, 'failed')];
    expect(retryAfterFailure(retryPlan(), one, one[0]!, cutOff, half)).toMatchObject({
      provider: { name: 'a' },
      nextTry: 2,
    });
    const before = { ...CURRENT_RETRY_RULES, lateWindowIsRetried: () => false };
    expect(retryAfterFailure(retryPlan(), one, one[0]!, cutOff, half, before)).toBe(undefined);
  });

  test('a run recorded before a retry had to leave room for the plan’s untried providers retries while any room is left', () => {
    const failure = { code: 'http_429', httpStatus: 429 };
    const one = [attempt(1, 'failed')];
    const before = { ...CURRENT_RETRY_RULES, retryLeavesRoomForFallbacks: () => false };
    expect(
      retryAfterFailure(retryPlan({ maxAttempts: 2 }), one, one[0]!, failure, half, before),
    ).toMatchObject({ provider: { name: 'a' }, nextTry: 2 });
  });

  test('no retry past the job’s attempt cap, for a hedged job, without settings, or for an attempt not failed', () => {
    const failure = { code: 'http_429', httpStatus: 429 };
    const one = [attempt(1, 'failed')];
    expect(retryAfterFailure(retryPlan({ maxAttempts: 1 }), one, one[0]!, failure, half)).toBe(
      undefined,
    );
    expect(retryAfterFailure(retryPlan({ mode: 'hedged' }), one, one[0]!, failure, half)).toBe(
      undefined,
    );
    // Plans admitted before retries existed (and `retry: false`) carry no settings.
    expect(retryAfterFailure(plan(), one, one[0]!, failure, half)).toBeUndefined();
    const unknown = [attempt(1, 'unknown')];
    expect(retryAfterFailure(retryPlan(), unknown, unknown[0]!, failure, half)).toBeUndefined();
  });
});
