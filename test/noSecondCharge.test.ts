import { attemptActivities } from '../src/activities/attempts';
import { signCallback } from '../src/api/signatures';
import { withDefaults } from '../src/config';
import { createLogger } from '../src/logger';
import type { ProviderConfig } from '../src/providers/provider';
import { reconcileAttemptsOfEndedJobs } from '../src/service/sweeper';
import type { Fault } from '../tools/simulator/faults';
import { holdStatement } from './support/barriers';
import { CALLBACK_SECRET } from './support/identities';
import {
  chargeBody,
  createJob,
  endedOrNeedsOperator,
  operator,
  readJob,
  untilJob,
} from './support/jobs';
import { eventually } from './support/polling';
import { providerSaw } from './support/providerLedger';
import { payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { attemptRows } from './support/rows';
import { certifyForSetup, startTestStack, type TestStack } from './support/stack';

/**
 * Two paths to a second charge, closed: a provider that answered success but keeps no record
 * under our key (or a signed "failed" callback that contradicts the call's own success answer)
 * never lets the fallback charge; and a key is never released while a charge of its job may
 * still land, so the next generation cannot charge beside it.
 */

const CALLBACKS = { callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET' };
const providers = (url: string): ProviderConfig[] => [
  // A short window and grace: "no record, said twice, the grace apart" is believable quickly;
  // a call a test holds times out before its window ends.
  payProvider(url, 'pay', {
    timeoutMs: TIMES_OUT_SOON_MS,
    lateResultTimeoutMs: 1_500,
    notFoundGraceMs: 200,
    ...CALLBACKS,
  }),
  payProvider(url, 'pay-backup'),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ providers });
  await certifyForSetup(stack, [['pay-backup', 'charge']]);
});
afterEach(() => stack.simulator.clearFaults());
afterAll(async () => {
  await stack?.stop();
});

async function sendCallback(report: Record<string, unknown>): Promise<Response> {
  const body = JSON.stringify(report);
  return fetch(`${stack.apiUrl}/v1/callbacks/pay`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'onejob-signature': signCallback(CALLBACK_SECRET, body),
    },
    body,
  });
}

/**
 * A charge whose call is held at the simulator (then behaves as `then`), and a signed "failed"
 * callback for its attempt 1 while the call is still out. Returns the job and the callback's answer.
 */
async function failedCallbackWhileCallIsOut(gate: string, then?: Fault) {
  stack.simulator.inject({
    route: 'charge',
    fault: { kind: 'hold', gate, ...(then ? { then } : {}) },
  });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running' || rows[0]?.state === 'unknown',
  );
  const callback = await sendCallback({
    attemptId: `${job.id}:1`,
    status: 'failed',
    error: 'card declined',
  });
  expect(callback.status).toBe(200);
  return { job, answered: (await callback.json()) as { state: string } };
}

/** A machine failing the attempt as never processed, straight in PostgreSQL, which must refuse. */
const failAsNeverProcessed = (attemptId: string) =>
  stack.pool.query(
    `UPDATE attempts SET state = 'failed', finished_at = now(),
            error = '{"code":"never_processed"}' WHERE id = $1`,
    [attemptId],
  );

describe('evidence of work outranks "no record"', () => {
  test.each([
    ['answers "status": "pending"', 'pending' as const],
    ['echoes an idempotency key of its own', 'own_key' as const],
  ])(
    'a charge provider that did the work and %s, with no record under our key, stays unknown and needs an operator: the fallback never charges',
    async (_how, answer) => {
      stack.simulator.inject({ route: 'charge', fault: { kind: 'files_under_own_id', answer } });
      const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
      const { job: seen, workflow } = await endedOrNeedsOperator(stack, job);

      expect(seen.status).toBe('unknown');
      expect(workflow.needsOperator).toBe(true);
      expect(workflow.waitingOn).toMatch(
        /needs an operator: the provider answered success, but no record is found under our key/,
      );
      // The status lookup did say "no record"; the attempt is still unknown, and GET says why.
      const attempt = seen.attempts[0];
      expect(attempt?.state).toBe('unknown');
      expect(attempt?.error).toMatchObject({ code: 'needs_operator', evidence: 'not-found-twice' });
      expect(providerSaw(stack, job.id)).toEqual({
        requests: [`${job.id}:1`],
        effects: [`${job.id}:1`],
      });
      // PostgreSQL refuses to fail it too: only an operator's verdict may.
      await expect(failAsNeverProcessed(`${job.id}:1`)).rejects.toThrow(
        /attempts_success_answer_is_not_failed_by_machine/,
      );

      // The operator, who found the charge at the provider, records it; still one charge.
      const resolved = await operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, {
        outcome: 'succeeded',
        reason: 'the provider filed it under its own id; found by the account',
        result: {
          ...(attempt?.rawOutput as Record<string, unknown>),
          status: 'succeeded',
          idempotencyKey: `${job.id}:1`,
        },
      });
      expect(resolved.status).toBe(200);
      const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
      expect(done.completedBy).toBe(`${job.id}:1`);
      expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:1`]);
    },
  );

  test('a signed "failed" callback followed by that call’s own success answer ends with the call’s result, and the fallback never charges', async () => {
    const { job, answered } = await failedCallbackWhileCallIsOut('callback-first');
    // Held: the call is still out and may answer success.
    expect(answered.state).not.toBe('failed');

    stack.simulator.openGate('callback-first');
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.completedBy).toBe(`${job.id}:1`);
    expect(done.attempts.map((a) => a.state)).toEqual(['succeeded']);
    expect(providerSaw(stack, job.id)).toEqual({
      requests: [`${job.id}:1`],
      effects: [`${job.id}:1`],
    });
  });

  test('a held "failed" callback settles the attempt failed once its call ends without a success answer, and then the fallback runs', async () => {
    const { job } = await failedCallbackWhileCallIsOut('callback-then-drop', {
      kind: 'drop_before',
    });
    stack.simulator.openGate('callback-then-drop');
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['pay', 'failed'],
      ['pay-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({
      code: 'provider_callback',
      message: 'card declined',
    });
    expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:2`]);
  });
});

describe('a provider seen breaking its contract after the work is not believed on "no record"', () => {
  test('once it has answered a charge under a key of its own, a later charge of it whose answer was lost (filed under its own id again) stays unknown for an operator, PostgreSQL refuses to fail it, and the fallback never charges', async () => {
    // Seen once: a charge answered success under a key of the provider's own.
    stack.simulator.inject({
      route: 'charge',
      fault: { kind: 'files_under_own_id', answer: 'own_key' },
    });
    const seenOnce = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    expect((await endedOrNeedsOperator(stack, seenOnce)).workflow.needsOperator).toBe(true);

    // Then it charges under its own id again, and the answer never reaches us (as when a
    // worker is killed between the provider's answer and its write): no success answer is on
    // the row, and its status lookup will say "no record" for ever.
    stack.simulator.inject({
      route: 'charge',
      fault: { kind: 'files_under_own_id', answer: 'lost' },
    });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    const { job: seen, workflow } = await endedOrNeedsOperator(stack, job);

    expect(seen.attempts.map((a) => [a.provider, a.state])).toEqual([['pay', 'unknown']]);
    expect(workflow.needsOperator).toBe(true);
    expect(workflow.waitingOn).toMatch(/answered success in breach of its contract before/);
    expect(seen.attempts[0]?.error).toMatchObject({
      code: 'needs_operator',
      evidence: 'not-found-twice',
    });
    expect(providerSaw(stack, job.id)).toEqual({
      requests: [`${job.id}:1`],
      effects: [`${job.id}:1`],
    });
    await expect(failAsNeverProcessed(`${job.id}:1`)).rejects.toThrow(/proves nothing/);

    // Both end by an operator's word: cancelled, their charges left for them to settle.
    for (const open of [seenOnce, job])
      expect(
        (
          await operator(stack, 'POST', `/jobs/${open.id}/cancel`, {
            reason: 'charges settled at the provider by hand',
          })
        ).status,
      ).toBe(200);
  });
});

describe('a success answer is written whole', () => {
  test('a 2xx that breaks the contract is recorded with its call’s end in one step: a failed callback that comes between them cannot fail the charge, and the fallback never charges', async () => {
    // The call is out and a signed "failed" callback is held; the call then answers 2xx
    // "pending" (the provider filed the charge under its own id).
    const { job } = await failedCallbackWhileCallIsOut('written-whole', {
      kind: 'files_under_own_id',
      answer: 'pending',
    });
    const attemptId = `${job.id}:1`;
    // The worker's write of that answer (its evidence of work) is held just before it is sent.
    const write = holdStatement(
      'attempts.settle-without-result',
      (values) => values[0] === attemptId && values[4] === true,
    );
    let redelivered: Promise<Response> | undefined;
    try {
      stack.simulator.openGate('written-whole');
      await write.reached;
      // The provider delivers its "failed" report again meanwhile. It is answered at once, or
      // it waits for the worker's write (then it must not be answered before that).
      redelivered = sendCallback({ attemptId, status: 'failed', error: 'card declined (again)' });
      await Promise.race([
        redelivered,
        eventually(
          async () =>
            (
              await stack.pool.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_stat_activity
                  WHERE datname = current_database() AND wait_event_type = 'Lock'
                    AND ltrim(query) ILIKE 'UPDATE attempts%reported_failure%'`,
              )
            ).rows[0]!.n,
          (waiting) => waiting > 0,
        ),
      ]);
    } finally {
      write.restore();
    }
    expect((await redelivered).status).toBe(200);

    const { job: seen, workflow } = await endedOrNeedsOperator(stack, job);
    expect(seen.attempts.map((a) => [a.provider, a.state])).toEqual([['pay', 'unknown']]);
    expect(workflow.needsOperator).toBe(true);
    expect(providerSaw(stack, job.id)).toEqual({ requests: [attemptId], effects: [attemptId] });
    // Let the job end: an operator cancels it (the charge stays unknown, for them to settle).
    expect(
      (await operator(stack, 'POST', `/jobs/${job.id}/cancel`, { reason: 'test over' })).status,
    ).toBe(200);
  });
});

describe('a key release never opens the door to a second charge', () => {
  test('a cancelled job whose charge is unknown keeps its key (409 naming the attempt, and PostgreSQL refuses too), is counted as unknown, and the sweeper settles the attempt from the status lookup as a lost race', async () => {
    // The charge is made, but its answer never arrives: the attempt stays unknown.
    stack.simulator.inject({
      route: 'charge',
      fault: { kind: 'hold', gate: 'release-unknown', then: { kind: 'drop_after' } },
    });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    expect(
      (await operator(stack, 'POST', `/jobs/${job.id}/cancel`, { reason: 'customer left' })).status,
    ).toBe(200);
    await untilJob(stack, job.id, (j) => j.status === 'cancelled');

    const refused = await operator(stack, 'POST', `/jobs/${job.id}/release-key`, {
      reason: 'run it again',
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      type: '/problems/attempt-may-take-effect',
      attempt: { attemptId: `${job.id}:1`, state: 'unknown' },
    });
    await expect(
      stack.pool.query(
        `UPDATE jobs SET key_release = '{"operator":"x","reason":"y","at":"z"}' WHERE id = $1`,
        [job.id],
      ),
    ).rejects.toThrow(/jobs_release_only_when_settled/);
    const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    expect(metrics).toMatch(/^onejob_jobs_unknown [1-9]/m);

    // The charge lands and its answer is lost; its workflow has closed, so the sweeper looks.
    stack.simulator.openGate('release-unknown');
    await eventually(
      () => Promise.resolve(providerSaw(stack, job.id).effects),
      (effects) => effects.length === 1,
    );
    const reconcile = attemptActivities({
      ...withDefaults(),
      pool: stack.pool,
      providers: stack.registry,
      logger: createLogger('test-sweeper'),
    }).reconcileAttempt;
    await eventually(
      async () => {
        await reconcileAttemptsOfEndedJobs({ pool: stack.pool, reconcile });
        return attemptRows(stack.pool, job.id);
      },
      (rows) => rows[0]?.state !== 'unknown',
    );
    const after = await readJob(stack, job.id);
    expect(after.status).toBe('cancelled');
    expect(after.attempts.map((a) => a.state)).toEqual(['lost']);

    // Settled: the key may go now, and the next generation charges once of its own.
    const released = await operator(stack, 'POST', `/jobs/${job.id}/release-key`, {
      reason: 'run it again',
    });
    expect(released.status).toBe(200);
  });
});
