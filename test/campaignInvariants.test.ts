import {
  answersBreakingInvariant8,
  believableAt,
  chargesByJob,
  failedWithHelpLeft,
  hiddenCharge,
  isTryAgainBetweenRuns,
  jobsStartedLate,
  providerKeysSentTwice,
  providerRecords,
  replaySettlement,
  replaysPastTheirWindow,
  settledAfterCallOver,
  windowsMeeting,
  type AttemptRow,
  type JobRow,
  type ProviderRecord,
  type ReplayRow,
  type RetryRules,
} from '../tools/chaos/invariants';
import { operatorsMayActAt } from '../tools/chaos/settle';

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
    seq: 1,
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

test('invariant 4 counts every request under a provider key on a route that does the work, executed or not, and no status lookup', () => {
  const charge = (key: string) => ({ route: 'charge', idempotencyKey: key });
  const lookup = (key: string) => ({ route: 'charge-status', idempotencyKey: key });
  const chat = (key: string) => ({ route: 'chat', idempotencyKey: key });
  const messages = (key: string) => ({ route: 'messages', idempotencyKey: key });
  // Sent once each, whatever came of it, and looked up as often as anyone likes: no resend.
  expect(
    providerKeysSentTwice([
      charge('j:1'),
      charge('j:2'),
      lookup('j:1'),
      lookup('j:1'),
      chat('c:1'),
      messages('m:1'),
    ]),
  ).toEqual(new Map());
  // The same attempt sent again: seen whether the provider answered it from its ledger or never
  // did the work at all (a dropped first request).
  expect(
    providerKeysSentTwice([
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
  // A chat or messages call sent twice: the API does the work (and bills it) twice. The check
  // that counted charge requests only let these through.
  expect(
    providerKeysSentTwice([chat('c:1'), chat('c:1'), messages('m:1'), messages('m:1')]),
  ).toEqual(
    new Map([
      ['c:1', 2],
      ['m:1', 2],
    ]),
  );
});

test('invariant 4 lets a key reach its provider once more for each replay PostgreSQL recorded for it, and no more', () => {
  const charge = (key: string) => ({ route: 'charge', idempotencyKey: key });
  const requests = [charge('j:1'), charge('j:1'), charge('j:1'), charge('k:1'), charge('k:1')];
  // j:1 was replayed twice (each a row in attempt_replays): three requests, none unrecorded.
  expect(providerKeysSentTwice(requests, new Map([['j:1', 2]]))).toEqual(new Map([['k:1', 2]]));
  // A replay begun but never sent (given up, or PostgreSQL restarted) leaves room unused.
  expect(
    providerKeysSentTwice(
      requests,
      new Map([
        ['j:1', 3],
        ['k:1', 1],
      ]),
    ),
  ).toEqual(new Map());
  // A re-send nobody recorded (a bug that replays without beginReplay): one request too many.
  expect(
    providerKeysSentTwice(
      requests,
      new Map([
        ['j:1', 1],
        ['k:1', 1],
      ]),
    ),
  ).toEqual(new Map([['j:1', 3]]));
});

test('invariant 4 counts one charge for a job whose charge was refused with 429, then retried on the same provider under its next key', () => {
  const entry = (key: string, executions: number) => ({
    route: 'charge',
    idempotencyKey: key,
    executions,
    requests: 1,
  });
  // Refused before any work (logged, never executed), then charged under the retry's own key.
  expect(chargesByJob([entry('j:1', 0), entry('j:2', 1), entry('k:1', 0)])).toEqual(
    new Map([['j', ['j:2']]]),
  );
  // Charged under both keys: twice, whichever provider's ledger each is in.
  expect(chargesByJob([entry('j:1', 1), entry('j:2', 1)]).get('j')).toEqual(['j:1', 'j:2']);
});

/**
 * Invariant 9 on made-up rows and provider records: a failed job with a retry or a fallback left
 * is reported; one that had nothing left, or whose last failure its provider's records do not
 * show as one that heals, is not. The records decide, not the code on the attempt.
 */
describe('invariant 9: a job fails only when no retry and no healthy fallback was left', () => {
  const rules: RetryRules = {
    triesInARow: { a: 3, b: 3, pay: 3, off: false },
    maxAttemptsPerJob: 16,
  };
  const charging = new Set(['pay']);

  function job(
    providers: string[],
    notes: unknown[] = [],
    mode = 'exclusive',
    failure: JobRow['failure'] = null,
  ) {
    const row: Pick<
      JobRow,
      'id' | 'terminal_status' | 'mode' | 'provider_plan' | 'notes' | 'failure'
    > = {
      id: 'j',
      terminal_status: 'failed',
      mode,
      provider_plan: providers,
      notes,
      failure,
    };
    return row;
  }

  /** What a provider did with a key: the statuses it answered (undefined: none), its work. */
  const answered = (statuses: Array<number | undefined>, executions = 0): ProviderRecord => ({
    requests: statuses.map((status) => (status === undefined ? {} : { answered: status })),
    executions,
  });
  const refused429 = answered([429]);

  /**
   * Failed attempts in seq order, `[provider, error, record]`: a record of `null` means the
   * provider received nothing and the attempt never began.
   */
  function made(...calls: Array<[string, AttemptRow['error'], ProviderRecord | null]>) {
    const records = new Map<string, ProviderRecord>();
    const rows: AttemptRow[] = calls.map(([provider, error, record], index) => {
      const id = `j:${index + 1}`;
      if (record) records.set(id, record);
      return {
        id,
        job_id: 'j',
        seq: index + 1,
        provider,
        state: 'failed',
        error,
        started_at: record === null ? null : at(index * 1_000),
        call_ended_at: record === null ? null : at(index * 1_000 + 100),
        finished_at: at(index * 1_000 + 100),
      };
    });
    return { rows, records };
  }
  const check = (row: ReturnType<typeof job>, attempts: ReturnType<typeof made>, r = rules) =>
    failedWithHelpLeft(row, attempts.rows, r, attempts.records, charging);

  const rateLimited = { code: 'http_429', certainty: 'definite' };
  const badRequest = { code: 'http_400', certainty: 'definite' };
  const neverSent = { code: 'never_sent', abandonedBecause: { code: 'orphaned' } };

  test('(a) reported: a single-provider job failed at its first 429, with two tries left and no retry scheduled', () => {
    expect(check(job(['a']), made(['a', rateLimited, refused429]))).toMatch(
      /attempt 1 on a failed \(http_429; its provider refused it before any work \(429\)\), its try 1 of 3 in a row there.*a retry was left/,
    );
    // A hedged job whose hedging was paused ran exclusive, and retries like one.
    expect(
      check(
        job(['a'], [{ event: 'hedging_paused' }], 'hedged'),
        made(['a', rateLimited, refused429]),
      ),
    ).toMatch(/a retry was left/);
    // A fallback its provider answered 503 on its first try had two more.
    expect(
      check(
        job(['a', 'b']),
        made(['a', badRequest, answered([400])], ['b', { code: 'http_503' }, answered([503])]),
      ),
    ).toMatch(/attempt 2 on b failed \(http_503/);
  });

  test("a job its owner's budget ended is left to invariant 12, which checks the budget's figures", () => {
    const ended = made(['a', rateLimited, refused429]);
    expect(check(job(['a', 'b']), ended)).toMatch(/b of its plan was never tried/);
    expect(check(job(['a', 'b'], [], 'exclusive', { code: 'budget-exceeded' }), ended)).toBe(
      undefined,
    );
  });

  test('(a) reported: a last attempt that was never sent (it never began, its provider received nothing), on a charge too', () => {
    expect(check(job(['a']), made(['a', neverSent, null]))).toMatch(
      /attempt 1 on a failed \(never_sent; it was never sent.*a retry was left/,
    );
    expect(check(job(['pay']), made(['pay', neverSent, null]))).toMatch(/it was never sent/);
    // A chat call that began and reached nobody (its link was cut), or that its provider never
    // answered (a dropped connection), or answered 502: worth another try.
    expect(check(job(['a']), made(['a', { code: 'connection' }, answered([])]))).toMatch(
      /its call began, and its provider received nothing/,
    );
    expect(
      check(job(['a']), made(['a', { code: 'connection' }, answered([undefined], 1)])),
    ).toMatch(/its provider answered nothing/);
    expect(check(job(['a']), made(['a', { code: 'http_502' }, answered([502], 1)]))).toMatch(
      /its provider answered 502/,
    );
  });

  test('(a) the provider’s records decide, not the code the service wrote on the attempt', () => {
    // Said to be a 429, but the provider answered 400: nothing to retry.
    expect(check(job(['a']), made(['a', rateLimited, answered([400])]))).toBeUndefined();
    // Said to be a 400, but the provider refused it with 429 before any work: a retry was owed.
    expect(check(job(['a']), made(['a', badRequest, refused429]))).toMatch(/a retry was left/);
    // A charge answered 502 after the work (a provider with side effects): not this invariant's.
    expect(
      check(job(['pay']), made(['pay', { code: 'http_502' }, answered([502], 1)])),
    ).toBeUndefined();
  });

  test('(b) reported: a provider of the plan never tried nor noted as passed by, while the cap had room', () => {
    expect(check(job(['a', 'b']), made(['a', badRequest, answered([400])]))).toMatch(
      /b of its plan was never tried/,
    );
  });

  test('(c) reported: an attempt never sent, and the next one on another provider with no retry scheduled', () => {
    const moved = made(['a', neverSent, null], ['b', badRequest, answered([400])]);
    expect(check(job(['a', 'b']), moved)).toMatch(
      /attempt 1 on a was never sent .* attempt 2 went to b with no retry scheduled/,
    );
    // A retry was scheduled after it (a user’s try-again took its place), or it did reach its
    // provider: not this case.
    expect(
      check(
        job(['a', 'b'], [{ event: 'retry_scheduled', provider: 'a', afterAttempt: 'j:1' }]),
        moved,
      ),
    ).toBeUndefined();
    expect(
      check(
        job(['a', 'b']),
        made(['a', neverSent, answered([undefined])], ['b', badRequest, answered([400])]),
      ),
    ).toBeUndefined();
    // Tried again on its provider: fine.
    expect(
      check(job(['a']), made(['a', neverSent, null], ['a', badRequest, answered([400])])),
    ).toBeUndefined();
  });

  test('not reported: the provider’s tries in a row were spent, or the cap left no room for a retry beside the untried', () => {
    const three = made(
      ['a', rateLimited, refused429],
      ['a', rateLimited, refused429],
      ['a', rateLimited, refused429],
    );
    expect(check(job(['a']), three)).toBeUndefined();
    // Tries on another provider in between start the count again: this is a's first try in a row.
    expect(
      check(
        job(['a', 'b']),
        made(
          ['a', rateLimited, refused429],
          ['b', badRequest, answered([400])],
          ['a', rateLimited, refused429],
        ),
      ),
    ).toMatch(/its try 1 of 3/);
    // Cap 2: one attempt made, and b untried, needs the last one: no retry, and b not tried
    // since its note says it was passed by.
    const passedB = [{ event: 'provider_skipped', provider: 'b', until: '2026-12-01T00:00:02Z' }];
    expect(
      check(job(['a', 'b'], passedB), made(['a', rateLimited, refused429]), {
        ...rules,
        maxAttemptsPerJob: 2,
      }),
    ).toBeUndefined();
    // The cap reached: an untried provider is not reported either.
    expect(
      check(job(['a', 'b']), made(['a', badRequest, answered([400])]), {
        ...rules,
        maxAttemptsPerJob: 1,
      }),
    ).toBeUndefined();
  });

  test('not reported: a failure its provider’s records do not show as healing, or one settled later', () => {
    // Answered 400, or a 2xx whose body broke the contract.
    expect(check(job(['a']), made(['a', badRequest, answered([400])]))).toBeUndefined();
    expect(
      check(job(['a']), made(['a', { code: 'contract_violation' }, answered([200], 1)])),
    ).toBeUndefined();
    // Settled by other evidence than the call, whatever the provider answered the call.
    for (const error of [
      { code: 'never_processed', settledBecause: 'no record, twice' },
      { code: 'provider_callback' },
      { code: 'operator' },
      { code: 'call_gone' },
      // Unknown first (its call outlived the attempt), settled by the call's late end.
      { code: 'http_503', earlier: { code: 'timeout' } },
    ])
      expect(check(job(['a']), made(['a', error, refused429]))).toBeUndefined();
  });

  test('not reported: a retry was scheduled (a user’s try-again took its place), a provider that never retries, a hedged job, a job that did not fail', () => {
    const scheduled = [{ event: 'retry_scheduled', provider: 'a', afterAttempt: 'j:1' }];
    expect(check(job(['a'], scheduled), made(['a', rateLimited, refused429]))).toBeUndefined();
    // A note about another attempt does not count for this one.
    expect(
      check(
        job(['a'], scheduled),
        made(['a', rateLimited, refused429], ['a', rateLimited, refused429]),
      ),
    ).toMatch(/attempt 2 on a/);
    expect(check(job(['off']), made(['off', rateLimited, refused429]))).toBeUndefined();
    expect(
      check(job(['a', 'b'], [], 'hedged'), made(['a', rateLimited, refused429])),
    ).toBeUndefined();
    expect(
      check({ ...job(['a']), terminal_status: 'cancelled' }, made(['a', rateLimited, refused429])),
    ).toBeUndefined();
  });

  test('not reported: providers admission left out as not certified, or passed by with a note', () => {
    const notCertified = [
      { event: 'provider_skipped', provider: 'b', reason: 'not certified for the contract' },
    ];
    expect(
      check(job(['a', 'b'], notCertified), made(['a', badRequest, answered([400])])),
    ).toBeUndefined();
    // The last attempt on a provider that may not run the job now: not retried.
    expect(
      check(
        job(['a', 'b'], notCertified),
        made(['a', badRequest, answered([400])], ['b', rateLimited, refused429]),
      ),
    ).toBeUndefined();
  });

  test('a violation shows the storms and outages that struck the provider while the job was on it', () => {
    const start = at(0).getTime() - 10_000;
    const window = (id: string, provider: string, from: number, to: number) => ({
      id,
      kind: 'rate_limit_storm',
      provider,
      from,
      to,
    });
    // The attempt ran from 10.0 s to 10.1 s of the campaign.
    const met = windowsMeeting(
      made(['a', rateLimited, refused429]).rows,
      [
        window('during', 'a', 9_000, 12_000),
        window('elsewhere', 'b', 9_000, 12_000),
        window('before', 'a', 2_000, 9_999),
      ],
      start,
    );
    expect(met.map((w) => w.id)).toEqual(['during']);
  });
});

describe('the providers’ records, by key', () => {
  test('requests and work under each key, status lookups left out', () => {
    const records = providerRecords(
      [
        { route: 'charge', idempotencyKey: 'j:1', executions: 1, requests: 1 },
        { route: 'chat', idempotencyKey: 'k:1', executions: 2, requests: 2 },
      ],
      [
        { route: 'charge', idempotencyKey: 'j:1', answered: 201 },
        { route: 'charge-status', idempotencyKey: 'j:1', answered: 200 },
        { route: 'chat', idempotencyKey: 'k:1', fault: 'drop_after' },
        { route: 'chat', idempotencyKey: 'k:1', answered: 200 },
      ],
    );
    expect(records.get('j:1')).toEqual({ requests: [{ answered: 201 }], executions: 1 });
    expect(records.get('k:1')).toEqual({
      requests: [{ fault: 'drop_after' }, { answered: 200 }],
      executions: 2,
    });
  });
});

/**
 * Invariant 10 on made-up answers: a charge the provider made must show in its job's answer as
 * succeeded, lost or unknown; failed or cancelled hides it, unless an operator said so.
 */
describe('invariant 10: a charge that happened is never hidden', () => {
  const answer = (status: string, state: string, code?: string) => ({
    status,
    completedBy: status === 'succeeded' ? 'j:1' : null,
    attempts: [{ id: 'j:1', state, error: code ? { code } : null }],
  });

  test('shown: the winner, a lost race, an attempt still unknown, an operator’s verdict', () => {
    expect(hiddenCharge('j:1', answer('succeeded', 'succeeded'))).toBeUndefined();
    expect(hiddenCharge('j:1', answer('cancelled', 'lost'))).toBeUndefined();
    expect(hiddenCharge('j:1', answer('failed', 'unknown', 'job_ended'))).toBeUndefined();
    expect(hiddenCharge('j:1', answer('failed', 'failed', 'operator'))).toBeUndefined();
  });

  test('hidden: a charged attempt the job says failed or cancelled, or one it does not show', () => {
    // The planted begin-returns-nothing: the second execution's "nothing was sent".
    expect(hiddenCharge('j:1', answer('failed', 'failed', 'no_contract'))).toMatch(
      /its job answers failed with attempt j:1 failed \(no_contract\): a charge that happened, hidden/,
    );
    expect(hiddenCharge('j:1', answer('cancelled', 'cancelled', 'job_not_open'))).toMatch(
      /attempt j:1 cancelled \(job_not_open\)/,
    );
    expect(hiddenCharge('j:2', answer('failed', 'failed', 'http_400'))).toMatch(
      /shows no attempt j:2/,
    );
  });
});

test('invariant 8 lets through the documented 503 of a try-again on a job whose run the nemesis terminated, and only that', () => {
  const struck = new Set(['job-1']);
  const tryAgain = { status: 503, problem: 'service-unavailable', path: '/v1/jobs/job-1/attempts' };
  expect(isTryAgainBetweenRuns(tryAgain, struck)).toBe(true);
  expect(isTryAgainBetweenRuns({ ...tryAgain, path: '/v1/jobs/job-2/attempts' }, struck)).toBe(
    false,
  );
  expect(isTryAgainBetweenRuns({ ...tryAgain, problem: 'internal', status: 500 }, struck)).toBe(
    false,
  );
  expect(isTryAgainBetweenRuns({ ...tryAgain, path: '/v1/jobs/job-1' }, struck)).toBe(false);
});

test('invariant 8 counts a job between runs when Temporal refused its start: the create answered workflow-start-refused, and a later answer to the same key named the job', () => {
  const base = { at: 0, ms: 1, op: 1, kind: 'create', method: 'POST', path: '/v1/jobs', via: 'lb' };
  const late = jobsStartedLate([
    { ...base, owner: 'alice', key: 'k1', status: 503, problem: 'workflow-start-refused' },
    { ...base, owner: 'alice', key: 'k1', status: 200, jobId: 'job-1', replayed: true },
    { ...base, owner: 'alice', key: 'k2', status: 201, jobId: 'job-2' },
    // Another owner's same key is another job.
    { ...base, owner: 'bob', key: 'k1', status: 201, jobId: 'job-3' },
  ]);
  expect([...late]).toEqual(['job-1']);
});

describe('invariant 8: every request answered, outside process faults without a 5xx', () => {
  const TIMEOUT = 'The operation was aborted due to timeout';
  const read = {
    at: 10_000,
    ms: 40,
    op: 7,
    kind: 'read',
    method: 'GET',
    path: '/v1/jobs/job-1',
    via: 'lb',
    jobId: 'job-1',
    status: 200,
  };
  const timedOut = { ...read, ms: 30_000, status: 0, error: TIMEOUT };
  const fault = { from: 20_000, to: 31_000 };
  const check = (exchanges: Array<typeof read & { error?: string }>, windows = [fault]) =>
    answersBreakingInvariant8(exchanges, windows, new Set()).map(({ message }) => message);

  test('a request the client gave up on after its whole wait, with no fault in that time, is reported: a timeout is no exemption', () => {
    const late = { ...timedOut, at: 40_000 };
    expect(check([late])).toEqual([
      expect.stringMatching(
        /answered nothing within the client's 30 s .*outside any process fault/,
      ),
    ]);
    // Nor without any fault in the whole run.
    expect(check([timedOut], [])).toHaveLength(1);
  });

  test('a timeout whose wait met a fault, like a reset or a refused connection there, is not', () => {
    // Sent before the fault, still waiting when it struck.
    expect(check([timedOut])).toEqual([]);
    expect(check([{ ...timedOut, ms: 2, error: 'fetch failed', at: 25_000 }])).toEqual([]);
    expect(check([{ ...read, status: 503, at: 25_000 }])).toEqual([
      expect.stringMatching(/without Retry-After/),
    ]);
  });

  test('outside a fault, a dropped connection or a 5xx is reported; an answer below 500 is not', () => {
    expect(
      check([
        read,
        { ...read, status: 404 },
        { ...read, status: 0, ms: 3, error: 'fetch failed' },
        { ...read, status: 502 },
      ]),
    ).toEqual([
      expect.stringMatching(/answered nothing \(fetch failed\)/),
      expect.stringMatching(/answered 502 .*outside any process fault/),
      expect.stringMatching(/answered 502 at 10000 ms: not the documented 503/),
    ]);
  });
});

/**
 * Invariant 11 on made-up rows (issue 59): a replay begins only inside its attempt's key window,
 * and an unknown attempt of a replay provider whose charge was made, its answer lost, is settled
 * by the service (by the replay), not by an operator, unless its job ended first (the database
 * refuses to replay for an ended job) or an operator raced the service during traffic.
 */
describe('invariant 11: replays inside the key window, and lost answers settled without operators', () => {
  const replay = (
    began: number,
    until: number,
    verdict: string | null = 'answered',
  ): ReplayRow => ({
    attempt_id: 'j:1',
    began_at: at(began),
    replay_until: at(until),
    verdict,
  });

  test('a replay begun at or after its window’s end is reported, one begun before it is not', () => {
    expect(replaysPastTheirWindow([replay(99_999, 100_000), replay(1_000, 100_000)])).toEqual([]);
    expect(
      replaysPastTheirWindow([replay(100_000, 100_000), replay(150_000, 100_000)]),
    ).toHaveLength(2);
  });

  const attempt = (state: string, code?: string): AttemptRow => ({
    id: 'j:1',
    job_id: 'j',
    seq: 1,
    provider: 'pay-replay',
    state,
    error: code ? { code } : null,
    started_at: at(0),
    call_ended_at: at(3_000),
    finished_at: state === 'unknown' ? null : at(8_000),
  });
  const charged = (firstFault?: string): ProviderRecord => ({
    requests: [firstFault ? { fault: firstFault } : {}, { answered: 409 }, { answered: 201 }],
    executions: 1,
  });
  const open = { terminal_status: null, finished_at: null };
  const succeeded = { terminal_status: 'succeeded', finished_at: at(8_000) };
  const looks = [replay(3_100, 100_000, 'in_progress'), replay(6_000, 100_000)];

  test('settled by the replay: counted, nothing reported', () => {
    expect(
      replaySettlement({
        attempt: attempt('succeeded'),
        replays: looks,
        record: charged('drop_after'),
        job: succeeded,
        operator: undefined,
      }),
    ).toEqual({ by: 'replay' });
  });

  test('a lost answer left to an operator, or still unknown, or failed, is reported', () => {
    const left = replaySettlement({
      attempt: attempt('succeeded'),
      replays: [replay(3_100, 100_000, 'in_progress')],
      record: charged('delay'),
      job: succeeded,
      operator: 'settle',
    });
    expect(left.by).toBe('operator');
    expect(left.violation).toMatch(/its provider made the charge.*settled by an operator/);
    expect(
      replaySettlement({
        attempt: attempt('unknown'),
        replays: looks,
        record: charged('drop_after'),
        job: open,
        operator: undefined,
      }).violation,
    ).toMatch(/still unknown/);
    expect(
      replaySettlement({
        attempt: attempt('failed', 'replay_refused'),
        replays: looks,
        record: charged(),
        job: { terminal_status: 'succeeded', finished_at: at(9_000) },
        operator: undefined,
      }).violation,
    ).toMatch(/failed \(replay_refused\)/);
  });

  test('not reported: no charge made, a stored error, an operator during traffic, a job that ended first', () => {
    const byOperator = (over: Partial<Parameters<typeof replaySettlement>[0]>) =>
      replaySettlement({
        attempt: attempt('failed', 'operator'),
        replays: looks,
        record: charged('drop_after'),
        job: { terminal_status: 'failed', finished_at: at(20_000) },
        operator: 'settle',
        ...over,
      });
    // A hung request: the provider never did the work, nothing to find by replaying.
    expect(byOperator({ record: { requests: [{ fault: 'hang' }], executions: 0 } })).toEqual({
      by: 'operator',
    });
    // Its first answer was a 5xx after the work: a replay gets that 5xx again, and no verdict.
    expect(byOperator({ record: charged('fail_after') })).toEqual({ by: 'operator' });
    expect(byOperator({ operator: 'traffic' })).toEqual({ by: 'operator_in_traffic' });
    // Cancelled while unknown: PostgreSQL refuses a replay for an ended job.
    expect(byOperator({ job: { terminal_status: 'cancelled', finished_at: at(5_000) } })).toEqual({
      by: 'operator_after_job_ended',
    });
    // Never looked at by replay (its own answer settled it): not one of these.
    expect(
      replaySettlement({
        attempt: attempt('succeeded'),
        replays: [],
        record: charged(),
        job: succeeded,
        operator: undefined,
      }),
    ).toEqual({ by: 'not_replayed' });
  });
});
