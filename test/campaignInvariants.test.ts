import {
  believableAt,
  chargeKeysSentTwice,
  chargesByJob,
  failedWithHelpLeft,
  settledAfterCallOver,
  windowsMeeting,
  type AttemptRow,
  type JobRow,
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
 * Invariant 9 on made-up rows: a failed job with a retry or a fallback left is reported; one
 * that had nothing left, or whose last failure is not the retry table's, is not.
 */
describe('invariant 9: a job fails only when no retry and no healthy fallback was left', () => {
  const rules: RetryRules = { triesInARow: { a: 3, b: 3, off: false }, maxAttemptsPerJob: 16 };

  function job(providers: string[], notes: unknown[] = [], mode = 'exclusive') {
    const row: Pick<JobRow, 'id' | 'terminal_status' | 'mode' | 'provider_plan' | 'notes'> = {
      id: 'j',
      terminal_status: 'failed',
      mode,
      provider_plan: providers,
      notes,
    };
    return row;
  }

  /** Attempts in seq order, each `provider:code`, all failed. */
  function attempts(...calls: Array<[string, AttemptRow['error']]>): AttemptRow[] {
    return calls.map(([provider, error], index) => ({
      id: `j:${index + 1}`,
      job_id: 'j',
      seq: index + 1,
      provider,
      state: 'failed',
      error,
      started_at: at(index * 1_000),
      call_ended_at: at(index * 1_000 + 100),
      finished_at: at(index * 1_000 + 100),
    }));
  }
  const rateLimited = { code: 'http_429', certainty: 'definite' };
  const badRequest = { code: 'http_400', certainty: 'definite' };

  test('(a) reported: a single-provider job failed at its first 429, with two tries left and no retry scheduled', () => {
    expect(failedWithHelpLeft(job(['a']), attempts(['a', rateLimited]), rules)).toMatch(
      /attempt 1 on a failed \(http_429\), its try 1 of 3 in a row there.*a retry was left/,
    );
    // A hedged job whose hedging was paused ran exclusive, and retries like one.
    expect(
      failedWithHelpLeft(
        job(['a'], [{ event: 'hedging_paused' }], 'hedged'),
        attempts(['a', rateLimited]),
        rules,
      ),
    ).toMatch(/a retry was left/);
    // A fallback that failed by a 503 on its first try had two more.
    expect(
      failedWithHelpLeft(
        job(['a', 'b']),
        attempts(['a', badRequest], ['b', { code: 'http_503' }]),
        rules,
      ),
    ).toMatch(/attempt 2 on b failed \(http_503\)/);
  });

  test('(b) reported: a provider of the plan never tried nor noted as passed by, while the cap had room', () => {
    expect(failedWithHelpLeft(job(['a', 'b']), attempts(['a', badRequest]), rules)).toMatch(
      /b of its plan was never tried/,
    );
  });

  test('not reported: the provider’s tries in a row were spent, or the cap left no room for a retry beside the untried', () => {
    const three = attempts(['a', rateLimited], ['a', rateLimited], ['a', rateLimited]);
    expect(failedWithHelpLeft(job(['a']), three, rules)).toBeUndefined();
    // Tries on another provider in between start the count again: this is a's first try in a row.
    expect(
      failedWithHelpLeft(
        job(['a', 'b']),
        attempts(['a', rateLimited], ['b', badRequest], ['a', rateLimited]),
        rules,
      ),
    ).toMatch(/its try 1 of 3/);
    // Cap 2: one attempt made, and b untried, needs the last one: no retry, and b not tried
    // since its note says it was passed by.
    const passedB = [{ event: 'provider_skipped', provider: 'b', until: '2026-12-01T00:00:02Z' }];
    expect(
      failedWithHelpLeft(job(['a', 'b'], passedB), attempts(['a', rateLimited]), {
        ...rules,
        maxAttemptsPerJob: 2,
      }),
    ).toBeUndefined();
    // The cap reached: an untried provider is not reported either.
    expect(
      failedWithHelpLeft(job(['a', 'b']), attempts(['a', badRequest]), {
        ...rules,
        maxAttemptsPerJob: 1,
      }),
    ).toBeUndefined();
  });

  test('not reported: a failure the retry table does not retry', () => {
    for (const error of [
      badRequest,
      { code: 'contract_violation' },
      { code: 'never_processed', settledBecause: 'no record, twice' },
      { code: 'provider_callback' },
      { code: 'operator' },
      { code: 'call_gone' },
      // The provider said not to try again.
      { ...rateLimited, provider: { type: 'requests', shouldRetry: false } },
      // Unknown first (its call outlived the attempt), settled by the call's late end.
      { code: 'http_503', earlier: { code: 'timeout' } },
    ])
      expect(failedWithHelpLeft(job(['a']), attempts(['a', error]), rules)).toBeUndefined();
    // …and it is the failure that decides, not the words around it.
    expect(
      failedWithHelpLeft(
        job(['a']),
        attempts(['a', { ...rateLimited, provider: { shouldRetry: true } }]),
        rules,
      ),
    ).toMatch(/a retry was left/);
  });

  test('not reported: a retry was scheduled (a user’s try-again took its place), a provider that never retries, a hedged job, a job that did not fail', () => {
    const scheduled = [{ event: 'retry_scheduled', provider: 'a', afterAttempt: 'j:1' }];
    expect(
      failedWithHelpLeft(job(['a'], scheduled), attempts(['a', rateLimited]), rules),
    ).toBeUndefined();
    // A note about another attempt does not count for this one.
    expect(
      failedWithHelpLeft(
        job(['a'], scheduled),
        attempts(['a', rateLimited], ['a', rateLimited]),
        rules,
      ),
    ).toMatch(/attempt 2 on a/);
    expect(failedWithHelpLeft(job(['off']), attempts(['off', rateLimited]), rules)).toBeUndefined();
    expect(
      failedWithHelpLeft(job(['a', 'b'], [], 'hedged'), attempts(['a', rateLimited]), rules),
    ).toBeUndefined();
    expect(
      failedWithHelpLeft(
        { ...job(['a']), terminal_status: 'cancelled' },
        attempts(['a', rateLimited]),
        rules,
      ),
    ).toBeUndefined();
  });

  test('not reported: providers admission left out as not certified, or passed by with a note', () => {
    const notCertified = [
      { event: 'provider_skipped', provider: 'b', reason: 'not certified for the contract' },
    ];
    expect(
      failedWithHelpLeft(job(['a', 'b'], notCertified), attempts(['a', badRequest]), rules),
    ).toBeUndefined();
    // The last attempt on a provider that may not run the job now: not retried.
    expect(
      failedWithHelpLeft(
        job(['a', 'b'], notCertified),
        attempts(['a', badRequest], ['b', rateLimited]),
        rules,
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
      attempts(['a', rateLimited]),
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
