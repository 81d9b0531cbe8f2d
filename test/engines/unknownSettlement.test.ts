import { attemptActivities } from '../../src/activities/attempts';
import { withDefaults } from '../../src/config';
import { beginProviderCall } from '../../src/db/attemptCalls';
import { createAttempt, findAttempt } from '../../src/db/attempts';
import { settleAbandonedAttempt, settleAttemptWithoutResult } from '../../src/db/attemptSettlement';
import { insertJobOrFindExisting } from '../../src/db/jobs';
import { requestFingerprint } from '../../src/domain/fingerprint';
import { jobWorkflowId } from '../../src/domain/workflowId';
import { createLogger } from '../../src/logger';
import { ProviderRegistry } from '../../src/providers/registry';
import { holdTransaction } from '../support/barriers';
import { TEST_OWNER } from '../support/identities';
import { chargeBody, createJob, freshKey, operator, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { effectsFor, providerSaw, requestsFor } from '../support/providerLedger';
import { payProvider } from '../support/providers';
import { attemptRows, untilCallEnded } from '../support/rows';
import { type TestStack, useTestStack } from '../support/stack';
import { untilWorkflowClosed, workflowStatus } from '../support/temporal';

/**
 * How an `unknown` charge is settled, and how it is not: never by a clock, and when its late
 * answer comes, at once (the answer nudges the workflow) rather than at the next look.
 */

/**
 * The statement that writes an operator's `failed` (or a signed callback's) on the attempt's row
 * (`reportAttemptFailure`, src/db/attemptFailureReports.ts): what a resolve waits in when the row is held.
 */
const OPERATOR_FAILED_REPORT = 'UPDATE attempts SET reported_failure';

/** Status lookups of one attempt that reached the simulator. */
const statusLookups = (stack: TestStack, attemptId: string) =>
  stack.simulator
    .requests()
    .filter((r) => r.route === 'charge-status' && r.idempotencyKey === attemptId);

/** When the attempt's call ended, as the worker recorded it (null while it runs). */
async function callEndedAt(stack: TestStack, attemptId: string): Promise<Date | null> {
  const { rows } = await stack.pool.query<{ call_ended_at: Date | null }>(
    'SELECT call_ended_at FROM attempts WHERE id = $1',
    [attemptId],
  );
  return rows[0]?.call_ended_at ?? null;
}

/**
 * The attempt's state and the status lookups made after `after` (ms since the epoch), once three
 * have been made or the job has left "one attempt, unknown" (then the caller's assertions say how).
 */
function lookedAtAfter(stack: TestStack, jobId: string, attemptId: string, after: number) {
  return eventually(
    async () => ({
      lookupsAfterTheWindow: statusLookups(stack, attemptId).filter((r) => Date.parse(r.at) > after)
        .length,
      attempts: (await attemptRows(stack.pool, jobId)).map((r) => [r.id, r.state]),
    }),
    (seen) =>
      seen.lookupsAfterTheWindow >= 3 ||
      seen.attempts.length !== 1 ||
      seen.attempts[0]![1] !== 'unknown',
  );
}

/** The late-result window of `pay` in the describe below. */
const WINDOW_MS = 1_500;

describe('an unknown charge past its late-result window', () => {
  const stack = useTestStack({
    providers: (url) => [
      // The call is cut off after 1.5 s; a status lookup's "never processed" would be believed at once after that.
      payProvider(url, 'pay', {
        timeoutMs: 500,
        lateResultTimeoutMs: WINDOW_MS,
        notFoundGraceMs: 0,
      }),
      payProvider(url, 'pay-backup'),
    ],
    // Look often, so that several looks happen after the window in little time.
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '200', ONEJOB_RECONCILE_MAX_DELAY_MS: '200' },
    certify: [['pay-backup', 'charge']],
  });

  test('whose call hangs is never turned into failed by a clock: after the window and several status lookups the attempt and the job are still unknown, and no fallback was sent', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    const attemptId = `${job.id}:1`;

    // The call was cut off at its late-result window: it can no longer bring an answer.
    const ended = await eventually(
      () => callEndedAt(stack, attemptId),
      (at) => at !== null,
    );
    // Three looks at the provider's status after that, each finding no verdict (or a verdict
    // that ends the wait: then the assertions below say what went wrong).
    const looked = await lookedAtAfter(stack, job.id, attemptId, ended!.getTime());
    expect(looked.attempts).toEqual([[attemptId, 'unknown']]);
    expect(looked.lookupsAfterTheWindow).toBeGreaterThanOrEqual(3);

    const seen = await untilJob(stack, job.id, () => true);
    expect(seen.status).toBe('unknown');
    // The error says the call was cut off at its window; that proves nothing either way.
    expect(JSON.stringify(seen.attempts[0]?.error)).toMatch(/late_window_exceeded/);
    const waiting = await workflowStatus(stack, job.workflowId);
    expect(waiting.status).toBe('unknown');
    expect(waiting.waitingOn).toMatch(/^blocked: attempt 1 on pay is unknown/);
    // Nothing went to the fallback, and nothing was charged.
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([attemptId]);
    expect(effectsFor(stack, job.id)).toEqual([]);

    // Let the workflow end (an operator's cancel), so the stack stops cleanly.
    const cancelled = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
      reason: 'test over',
    });
    expect(cancelled.status).toBe(200);
  });

  // The other way to stay unknown: the call ended by itself, before its window, with an answer
  // that says nothing of the charge (which was made), and no status lookup can answer.
  test.each([
    ['an error status after the charge (502)', { kind: 'fail_after', status: 502 }],
    ['its connection cut after the charge', { kind: 'drop_after' }],
  ] as const)(
    'whose call ended with %s while its status lookups fail is never turned into failed by a clock: after the window and several lookups the attempt and the job are still unknown, and no fallback was sent',
    async (_, fault) => {
      // The provider's status lookup is down (503) for the whole test (faults end with it).
      stack.simulator.inject({
        route: 'charge-status',
        forMs: 600_000,
        fault: { kind: 'fail_before', status: 503 },
      });
      // This job's charge only (by its account): another job's fallback cannot take the fault.
      const body = chargeBody(['pay', 'pay-backup']);
      stack.simulator.inject({ route: 'charge', account: body.input.account, fault });
      const job = await createJob(stack, body);
      const attemptId = `${job.id}:1`;
      const [call] = await eventually(
        async () => requestsFor(stack, job.id),
        (calls) => calls.length > 0,
      );
      // The call reached the provider after it began, so its window is over by then.
      const windowOver = Date.parse(call!.at) + WINDOW_MS;
      // Its call has ended (by its own answer or cut, as the error below says).
      await eventually(
        () => callEndedAt(stack, attemptId),
        (at) => at !== null,
      );
      const looked = await lookedAtAfter(stack, job.id, attemptId, windowOver);
      expect(looked.attempts).toEqual([[attemptId, 'unknown']]);
      expect(looked.lookupsAfterTheWindow).toBeGreaterThanOrEqual(3);

      const seen = await untilJob(stack, job.id, () => true);
      expect(seen.status).toBe('unknown');
      // Its own answer (or its cut) made it unknown, not the window.
      expect(seen.attempts[0]?.error).toMatchObject({ certainty: 'ambiguous' });
      expect(JSON.stringify(seen.attempts[0]?.error)).not.toMatch(/late_window_exceeded/);
      // The charge was made once, and nothing went to the fallback, which would charge again.
      expect(providerSaw(stack, job.id)).toEqual({
        requests: [attemptId],
        effects: [attemptId],
      });

      const cancelled = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
        reason: 'test over',
      });
      expect(cancelled.status).toBe(200);
    },
  );
});

describe('a job blocked on an unknown charge', () => {
  const stack = useTestStack({
    // Cut off after 1.5 s, so that only a status lookup can bring its answer after that.
    providers: (url) => [
      payProvider(url, 'pay', { timeoutMs: 500, lateResultTimeoutMs: 1_500 }),
      payProvider(url, 'pay-backup'),
    ],
    // The reconciler's looks come at most a second apart; the workflow's own look is an hour off.
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '100', ONEJOB_RECONCILE_MAX_DELAY_MS: '1000' },
    certify: [['pay-backup', 'charge']],
  });

  test('sleeps in its workflow while the workers look at it: many status lookups add nothing to its history, and the look that finds the charge done wakes the workflow to succeed', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'blocked-sleeps' } });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    const attemptId = `${job.id}:1`;
    const history = async () =>
      (await stack.temporal.workflow.getHandle(job.workflowId).fetchHistory()).events ?? [];

    // Its call is cut off at its window (so only a status lookup can bring the answer now), and
    // the workflow has looked ("still processing") and gone to sleep: its last event is the timer.
    await eventually(
      () => callEndedAt(stack, attemptId),
      (at) => at !== null,
    );
    await eventually(
      () => workflowStatus(stack, job.workflowId),
      (status) => /^blocked: attempt 1 on pay is unknown/.test(status.waitingOn),
    );
    const asleep = (
      await eventually(history, (events) => events.at(-1)?.timerStartedEventAttributes != null)
    ).length;
    const lookupsAsleep = statusLookups(stack, attemptId).length;

    // Three more looks, by the reconciler, and not one history event.
    await eventually(
      async () => statusLookups(stack, attemptId).length,
      (n) => n >= lookupsAsleep + 3,
    );
    expect((await history()).length).toBe(asleep);
    expect((await attemptRows(stack.pool, job.id)).map((r) => r.state)).toEqual(['unknown']);

    // The provider finishes the charge: the next look finds it and wakes the workflow to end on it.
    stack.simulator.openGate('blocked-sleeps');
    expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
    expect(await stack.temporal.workflow.getHandle(job.workflowId).result()).toMatchObject({
      status: 'succeeded',
      completedBy: attemptId,
    });
    const seen = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(seen.attempts.map((a) => [a.id, a.state])).toEqual([[attemptId, 'succeeded']]);
    expect(providerSaw(stack, job.id).effects).toEqual([attemptId]);
  });
});

describe('a late answer', () => {
  const stack = useTestStack({
    providers: (url) => [
      payProvider(url, 'pay', { timeoutMs: 500 }),
      payProvider(url, 'pay-backup'),
    ],
    // After its first look the workflow would look again only in ten minutes.
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '600000' },
    certify: [['pay-backup', 'charge']],
  });

  test('nudges the workflow: the job and its workflow settle on it at once, without waiting for the next look or a status lookup', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'nudge' } });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    const attemptId = `${job.id}:1`;

    // Timed out, and looked at once: the status lookup says "still processing".
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    await eventually(
      () => workflowStatus(stack, job.workflowId),
      (status) => /^blocked: attempt 1 on pay is unknown/.test(status.waitingOn),
    );
    const lookupsBefore = statusLookups(stack, attemptId).length;
    expect(lookupsBefore).toBeGreaterThanOrEqual(1);

    // The charge is made and answered now, long after the attempt timeout.
    stack.simulator.openGate('nudge');
    // The answer's compare-and-swap settles the row; the workflow learns of it from the nudge
    // alone (its next look is ten minutes away), and ends with that outcome.
    const settled = await eventually(
      () => workflowStatus(stack, job.workflowId),
      (status) => status.status !== 'unknown',
    );
    expect(settled.status).toBe('succeeded');
    expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
    expect(await stack.temporal.workflow.getHandle(job.workflowId).result()).toMatchObject({
      status: 'succeeded',
      completedBy: attemptId,
    });
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');

    expect(done.completedBy).toBe(attemptId);
    expect(done.result).toMatchObject({ idempotencyKey: attemptId, amountCents: 1250 });
    // No look at the provider's status settled it: the late answer did, and told the workflow.
    expect(statusLookups(stack, attemptId)).toHaveLength(lookupsBefore);
    // The late answer's own nudge; the reconciler may send its wake-up too before the workflow
    // closes (migration 0014's trigger makes every settlement due), and a second nudge is a no-op.
    const history = await stack.temporal.workflow.getHandle(job.workflowId).fetchHistory();
    const signals = (history.events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes)
      .filter((signal) => signal !== undefined && signal !== null);
    expect(signals.length).toBeGreaterThanOrEqual(1);
    expect(new Set(signals.map((signal) => signal.signalName))).toEqual(
      new Set(['attemptSettled']),
    );
    expect(providerSaw(stack, job.id)).toEqual({ requests: [attemptId], effects: [attemptId] });
  });
});

describe('an unknown charge under a job an operator cancelled', () => {
  const stack = useTestStack({
    providers: (url) => [payProvider(url, 'pay', { timeoutMs: 500, lateResultTimeoutMs: 1_000 })],
  });

  /**
   * A charge job whose only attempt is unknown, cancelled by an operator, its workflow closed,
   * and its call over (its late-result window closed): nothing but an operator settles it now.
   * Before the call is over, an operator's `failed` is held, since the call may still answer.
   */
  async function cancelledWithUnknownAttempt(
    fault: Parameters<TestStack['simulator']['inject']>[0]['fault'],
  ) {
    stack.simulator.inject({ route: 'charge', fault });
    const job = await createJob(stack, chargeBody(['pay']));
    const attemptId = `${job.id}:1`;
    await eventually(
      () => attemptRows(stack.pool, job.id),
      (rows) => rows[0]?.state === 'unknown',
    );
    const cancelled = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
      reason: 'the customer withdrew the order',
    });
    expect(cancelled.status).toBe(200);
    await untilWorkflowClosed(stack, job.workflowId);
    await untilCallEnded(stack.pool, attemptId);
    expect((await attemptRows(stack.pool, job.id)).map((r) => r.state)).toEqual(['unknown']);
    return { job, attemptId };
  }

  test('the operator can still settle it as failed once the job has ended and its workflow closed: no attempt stays unknown for ever', async () => {
    const { job, attemptId } = await cancelledWithUnknownAttempt({ kind: 'hang' });
    const resolved = await operator(stack, 'POST', `/attempts/${attemptId}/resolve`, {
      outcome: 'failed',
      reason: 'the provider has no charge under this key',
    });
    expect(resolved.status).toBe(200);
    expect(await resolved.json()).toEqual({ attemptId, state: 'failed' });
    const [row] = await attemptRows(stack.pool, job.id);
    expect(row?.state).toBe('failed');
    const seen = await untilJob(stack, job.id, () => true);
    expect(seen.status).toBe('cancelled');
    expect(seen.attempts[0]?.error).toMatchObject({ code: 'operator' });
  });

  test('a charge that did happen is recorded as a lost race under the cancelled job, never as its result', async () => {
    const { job, attemptId } = await cancelledWithUnknownAttempt({
      kind: 'hold',
      gate: 'after-cancel',
    });
    // The provider gets round to the charge only now, after the job ended.
    stack.simulator.openGate('after-cancel');
    await eventually(
      async () => effectsFor(stack, job.id).length,
      (charges) => charges === 1,
    );
    const record = await (
      await fetch(`${stack.simulator.url}/v1/charges/by-key/${attemptId}`)
    ).json();
    const resolved = await operator(stack, 'POST', `/attempts/${attemptId}/resolve`, {
      outcome: 'succeeded',
      reason: 'the provider console shows the charge',
      result: record,
    });
    expect(resolved.status).toBe(200);
    expect(await resolved.json()).toEqual({ attemptId, state: 'lost' });
    const { rows: races } = await stack.pool.query(
      'SELECT losing_attempt_id FROM race_events WHERE job_id = $1',
      [job.id],
    );
    expect(races).toEqual([{ losing_attempt_id: attemptId }]);
    const seen = await untilJob(stack, job.id, () => true);
    expect(seen.status).toBe('cancelled');
    expect(seen.result).toBeNull();
  });
});

describe('an operator resolve that a Temporal-level cancel overtakes', () => {
  const stack = useTestStack({
    providers: (url) => [payProvider(url, 'pay', { timeoutMs: 500, lateResultTimeoutMs: 1_000 })],
  });

  test('is answered with the verdict or a refusal, never a 500: the workflow was cancelled while the update ran', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const job = await createJob(stack, chargeBody(['pay']));
    const attemptId = `${job.id}:1`;
    await eventually(
      () => attemptRows(stack.pool, job.id),
      (rows) => rows[0]?.state === 'unknown',
    );
    // Hold the attempt's row, so the resolve update is still running when the cancel lands.
    const barrier = await holdTransaction(stack);
    let status: number;
    try {
      await barrier.client.query('SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE', [attemptId]);
      const resolving = operator(stack, 'POST', `/attempts/${attemptId}/resolve`, {
        outcome: 'failed',
        reason: 'the provider has no charge under this key',
      });
      // The resolve's own write (an operator's failed is a failure report) waits for the row:
      // not any statement, since the call's end (its window is 1 s) or a look may wait there too.
      await barrier.blocked(OPERATOR_FAILED_REPORT);
      await stack.temporal.workflow.getHandle(job.workflowId).cancel();
      const answer = await Promise.race([
        resolving,
        // The update may also wait for the row: then let it go, the answer comes after.
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000)),
      ]);
      await barrier.release();
      status = (answer ?? (await resolving)).status;
    } catch (error) {
      await barrier.release();
      throw error;
    }
    expect([200, 409]).toContain(status);
    await untilWorkflowClosed(stack, job.workflowId);
    const [row] = await attemptRows(stack.pool, job.id);
    expect(row?.state).not.toBe('unknown');
  });
});

describe('an operator resolve of an attempt whose late answer settled it before its workflow looked', () => {
  const stack = useTestStack({
    providers: (url) => [payProvider(url, 'pay', { timeoutMs: 500, lateResultTimeoutMs: 60_000 })],
    // The workflow does not look at the attempt again by itself while the test runs.
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '600000', ONEJOB_RECONCILE_MAX_DELAY_MS: '600000' },
  });

  test("is refused as not resolvable, as it is a moment later: the attempt row decides, not the workflow's older view of it", async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const body = chargeBody(['pay']);
    const job = await createJob(stack, body);
    const attemptId = `${job.id}:1`;
    await eventually(
      () => workflowStatus(stack, job.workflowId),
      (status) => status.attempts[0]?.state === 'unknown',
    );
    // The late answer's own write (a definite failure), with its nudge to the workflow not yet
    // delivered: the workflow still sees the attempt as unknown.
    await settleAttemptWithoutResult(stack.pool, attemptId, 'failed', {
      code: 'http_400',
      certainty: 'definite',
      message: 'late answer: refused before any work',
    });
    const answer = await operator(stack, 'POST', `/attempts/${attemptId}/resolve`, {
      outcome: 'succeeded',
      reason: 'the ledger shows the charge',
      // A result the contract accepts, so that only the attempt's state can refuse it.
      result: { id: 'ch_operator', status: 'succeeded', ...body.input, idempotencyKey: attemptId },
    });
    expect({ status: answer.status, body: await answer.json() }).toMatchObject({
      status: 409,
      body: { type: '/problems/attempt-not-resolvable' },
    });
    const [row] = await attemptRows(stack.pool, job.id);
    expect(row?.state).toBe('failed');
  });
});

describe('a provider that registers a key only when it is asked about it', () => {
  const stack = useTestStack({
    providers: (url) => [
      // Cut off soon, and "no record" believed at once after that: only the rule below waits.
      payProvider(url, 'pay', { timeoutMs: 300, lateResultTimeoutMs: 600, notFoundGraceMs: 0 }),
      payProvider(url, 'pay-backup'),
    ],
    // The first look comes after the call was cut off.
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '1500', ONEJOB_RECONCILE_MAX_DELAY_MS: '500' },
    certify: [['pay-backup', 'charge']],
  });

  test('is asked twice before its "no record" is believed, so the charge it makes after the first lookup is found: one charge, no fallback', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'register_after_status_lookup' } });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.completedBy).toBe(`${job.id}:1`);
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([['pay', 'succeeded']]);
    expect(effectsFor(stack, job.id)).toHaveLength(1);
  });
});

describe('"no record, said twice, the grace apart" with a worker whose clock is wrong', () => {
  const stack = useTestStack({ providers: (url) => [payProvider(url, 'pay')] });

  /**
   * A charge attempt whose call began a moment ago and may still land for a minute (its
   * late-result window), now unknown; its job's workflow never runs, so only the test looks.
   */
  async function unknownChargeWhoseCallMayStillLand(provider: string) {
    const key = freshKey('skewed-clock');
    const intent = { ...chargeBody([provider]), mode: 'exclusive' as const };
    const { job } = await insertJobOrFindExisting(stack.pool, {
      ownerId: TEST_OWNER,
      idempotencyKey: key,
      requestFingerprint: requestFingerprint(intent),
      intent,
      workflowId: jobWorkflowId(TEST_OWNER, key),
    });
    const attempt = await createAttempt(stack.pool, {
      jobId: job.id,
      seq: 1,
      provider,
      exclusive: true,
    });
    await beginProviderCall(stack.pool, attempt.id, { [provider]: 60_000 });
    await settleAbandonedAttempt(stack.pool, attempt.id, { code: 'timeout' });
    return attempt.id;
  }

  test('is decided by PostgreSQL\'s clock alone: a worker an hour ahead never believes "no record" while the call may still land', async () => {
    // No grace after the window: only the window keeps the attempt unknown.
    const providers = new ProviderRegistry([
      payProvider(stack.simulator.url, 'pay-skewed', {
        lateResultTimeoutMs: 60_000,
        notFoundGraceMs: 0,
      }),
    ]);
    const attemptId = await unknownChargeWhoseCallMayStillLand('pay-skewed');
    const reconcile = attemptActivities({
      ...withDefaults(),
      pool: stack.pool,
      providers,
      logger: createLogger('skewed-worker', 'silent'),
    }).reconcileAttempt;
    // This process's wall clock (and only it: timers keep running) an hour ahead.
    jest.useFakeTimers({
      now: Date.now() + 3_600_000,
      advanceTimers: true,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    let looks: Array<{ state: string; detail?: string }>;
    try {
      const first = await reconcile({ attemptId });
      // Some time passes between the two looks, as it would.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await reconcile({ attemptId });
      looks = [first, second].map(({ state, detail }) => ({ state, detail }));
    } finally {
      jest.useRealTimers();
    }
    expect(looks).toEqual([
      { state: 'unknown', detail: expect.stringMatching(/could still land/) },
      { state: 'unknown', detail: expect.stringMatching(/could still land/) },
    ]);
    expect((await findAttempt(stack.pool, attemptId))?.firstNotFoundAt).toBeNull();
  });
});
