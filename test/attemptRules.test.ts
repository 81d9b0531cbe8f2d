import { signCallback } from '../src/api/signatures';
import { CALLBACK_SECRET } from './support/identities';
import { chargeBody, createJob, readJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { effectsFor, requestsFor } from './support/providerLedger';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { attemptChecks, attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/** Who may ask for another attempt, how many a job may have, and which callbacks count. */
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 20_000 }),
    chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 20_000 }),
    chatProvider(url, 'chat-uncertified', 'sim-backup', { timeoutMs: 20_000 }),
    payProvider(url, 'pay-blind', {
      timeoutMs: TIMES_OUT_SOON_MS,
      statusUrl: undefined,
      // A hung call is cut off after this: a "failed" callback held for it settles then.
      lateResultTimeoutMs: 3_000,
      callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET',
    }),
    payProvider(url, 'pay-backup', { timeoutMs: 20_000 }),
  ],
  hedgeDelayMs: 60_000,
  env: { ONEJOB_MAX_ATTEMPTS_PER_JOB: '3' },
  certify: [
    ['chat-backup', 'summarize'],
    ['pay-backup', 'charge'],
  ],
});

const hedged = () => ({
  type: 'summarize',
  input: { text: 'Try again, but only where failover may go. And not for ever.' },
  providers: ['chat', 'chat-backup'],
  mode: 'hedged',
});
const askFor = (jobId: string, provider?: string) =>
  stack.request('POST', `/v1/jobs/${jobId}/attempts`, { body: provider ? { provider } : {} });

test('a user’s explicit request for a provider not certified for the contract in force is refused, as a failover to it would be', async () => {
  stack.simulator.inject({ route: 'chat', times: 10, fault: { kind: 'hang' } });
  const job = await createJob(stack, hedged());
  await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');

  const refused = await askFor(job.id, 'chat-uncertified');
  expect(refused.status).toBe(409);
  expect(await refused.json()).toMatchObject({
    type: '/problems/provider-not-certified',
    detail: expect.stringMatching(/chat-uncertified may not run this job: not certified/),
  });
  // Refused means nothing happened: no attempt, no request.
  expect((await readJob(stack, job.id)).attempts).toHaveLength(1);
  expect(requestsFor(stack, job.id, 'chat').map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
  // The certified fallback, and the primary again, are fine.
  expect((await askFor(job.id, 'chat-backup')).status).toBe(202);
  expect((await askFor(job.id, 'chat')).status).toBe(202);
});

test('a job takes no more attempts than its cap: the next "try again" is refused with attempt-limit-reached', async () => {
  stack.simulator.inject({ route: 'chat', times: 10, fault: { kind: 'hang' } });
  const job = await createJob(stack, hedged());
  await untilJob(stack, job.id, (j) => j.attempts.length === 1);
  expect((await askFor(job.id, 'chat-backup')).status).toBe(202);
  expect((await askFor(job.id)).status).toBe(202);
  const refused = await askFor(job.id, 'chat');
  expect(refused.status).toBe(409);
  expect(await refused.json()).toMatchObject({
    type: '/problems/attempt-limit-reached',
    maxAttempts: 3,
  });
  expect((await readJob(stack, job.id)).attempts).toHaveLength(3);
  // Each of the three calls reaches the provider (the last may still be on its way): no fourth.
  const sent = await eventually(
    () => Promise.resolve(requestsFor(stack, job.id, 'chat').map((r) => r.idempotencyKey)),
    (keys) => keys.length >= 3,
  );
  expect(sent.sort()).toEqual([1, 2, 3].map((seq) => `${job.id}:${seq}`));
});

describe('provider callbacks', () => {
  const post = (provider: string, body: string, signature: string) =>
    fetch(`${stack.apiUrl}/v1/callbacks/${provider}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'onejob-signature': signature },
      body,
    });
  /** Temporal holds new events back from the history while a workflow task runs. */
  const noWorkflowTaskPending = (workflowId: string) =>
    eventually(
      async () => (await stack.temporal.workflow.getHandle(workflowId).describe()).raw,
      (described) => !described.pendingWorkflowTask,
    );
  const signals = async (workflowId: string): Promise<number> =>
    (await stack.temporal.workflow.getHandle(workflowId).fetchHistory()).events?.filter(
      (e) => e.workflowExecutionSignaledEventAttributes,
    ).length ?? 0;

  test('a signed "failed" callback for a hung attempt is held while the call may still answer, then settles it failed, and the next provider in the plan runs', async () => {
    // Sent, never answered, and no status lookup: only the callback can settle it, once the
    // call can no longer answer success (its late-result window is over).
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const job = await createJob(stack, chargeBody(['pay-blind', 'pay-backup']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);

    const body = JSON.stringify({
      attemptId: `${job.id}:1`,
      status: 'failed',
      error: 'declined before any charge',
    });
    const settled = await post('pay-blind', body, signCallback(CALLBACK_SECRET, body));
    expect(settled.status).toBe(200);
    expect(await settled.json()).toMatchObject({ attemptId: `${job.id}:1`, state: 'unknown' });

    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.completedBy).toBe(`${job.id}:2`);
    expect(done.attempts).toEqual([
      expect.objectContaining({
        provider: 'pay-blind',
        state: 'failed',
        error: expect.objectContaining({
          code: 'provider_callback',
          message: 'declined before any charge',
        }),
      }),
      expect.objectContaining({ provider: 'pay-backup', state: 'succeeded' }),
    ]);
    const rows = await attemptRows(stack.pool, job.id);
    expect(rows.map((a) => [a.provider, a.state])).toEqual([
      ['pay-blind', 'failed'],
      ['pay-backup', 'succeeded'],
    ]);
    // The fallback was created only once the callback had settled the first attempt.
    expect(rows[1]!.created_at.getTime()).toBeGreaterThanOrEqual(rows[0]!.finished_at!.getTime());
    expect(effectsFor(stack, job.id).map((e) => [e.idempotencyKey, e.executions])).toEqual([
      [`${job.id}:2`, 1],
    ]);
  });

  test('a signed "failed" callback for the last provider in the plan, whose call is over, fails the job at once', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_before' } });
    const job = await createJob(stack, chargeBody(['pay-blind']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');

    const body = JSON.stringify({ attemptId: `${job.id}:1`, status: 'failed', error: 'declined' });
    const settled = await post('pay-blind', body, signCallback(CALLBACK_SECRET, body));
    expect(settled.status).toBe(200);
    expect(await settled.json()).toMatchObject({ attemptId: `${job.id}:1`, state: 'failed' });

    const done = await untilJob(stack, job.id, (j) => j.status === 'failed');
    expect(done.result).toBeNull();
    expect(done.completedBy).toBeNull();
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([['pay-blind', 'failed']]);
    expect((await attemptRows(stack.pool, job.id)).map((a) => a.state)).toEqual(['failed']);
    const { rows } = await stack.pool.query('SELECT terminal_status FROM jobs WHERE id = $1', [
      job.id,
    ]);
    expect(rows).toEqual([{ terminal_status: 'failed' }]);
    expect(effectsFor(stack, job.id)).toEqual([]);
  });

  test('a callback is refused alike whether or not its provider takes callbacks, so the unauthenticated route names none', async () => {
    const body = JSON.stringify({ attemptId: 'x:1', status: 'failed', error: 'declined' });
    const answers = async (signature: string) =>
      Promise.all(
        ['pay-blind', 'pay-backup', 'no-such-provider'].map(async (provider) => {
          const answer = await post(provider, body, signature);
          // The problem's instance is the path asked for; everything else must be the same.
          const { instance, ...problem } = (await answer.json()) as { instance: string };
          expect(instance).toBe(`/v1/callbacks/${provider}`);
          return { status: answer.status, problem };
        }),
      );
    // Well formed, under another secret; and not formed at all.
    for (const signature of [signCallback('not-the-secret', body), 'v1=nothing'] as const) {
      const [takes, takesNone, unknown] = await answers(signature);
      expect(takes!.status).toBe(401);
      expect(takesNone).toEqual(takes);
      expect(unknown).toEqual(takes);
    }
  });

  test('a callback signed longer ago than the tolerance is refused and changes nothing', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
    const job = await createJob(stack, chargeBody(['pay-blind']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    const body = JSON.stringify({ attemptId: `${job.id}:1`, status: 'failed', error: 'declined' });
    const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600;
    const old = await post('pay-blind', body, signCallback(CALLBACK_SECRET, body, tenMinutesAgo));
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({
      type: '/problems/bad-signature',
      detail: expect.stringMatching(/at most 300 s are accepted/),
    });
    expect((await readJob(stack, job.id)).attempts.map((a) => a.state)).toEqual(['unknown']);
  });

  test('a replayed callback within its window changes nothing and sends no signal', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
    // The fallback's call hangs, so the workflow is still running when the replay comes.
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const job = await createJob(stack, chargeBody(['pay-blind', 'pay-backup']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    // The callback comes after the reconciler's first look has found that only an operator (or
    // a callback) can settle it, and has told the workflow so: a signal the replay must not add to.
    await eventually(
      () => attemptChecks(stack.pool, `${job.id}:1`),
      (checks) => checks?.needsOperator === true,
    );
    const body = JSON.stringify({ attemptId: `${job.id}:1`, status: 'failed', error: 'declined' });
    const signature = signCallback(CALLBACK_SECRET, body);

    const first = await post('pay-blind', body, signature);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    await untilJob(stack, job.id, (j) => j.attempts[1]?.state === 'running');
    // The settled attempt's wake-up is also sent by the workers' reconciler (and, if its first
    // look came before the callback, so was "only an operator can settle it"): count once every
    // wake-up of attempt 1 is sent and taken, so that only the replay could add a signal.
    await eventually(
      () => attemptChecks(stack.pool, `${job.id}:1`),
      (checks) => checks?.nextCheckAt === null,
    );
    await noWorkflowTaskPending(job.workflowId);
    const before = await readJob(stack, job.id);
    const signalsBefore = await signals(job.workflowId);
    expect(signalsBefore).toBeGreaterThanOrEqual(1);

    const replay = await post('pay-blind', body, signature);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toMatchObject({ attemptId: `${job.id}:1`, state: 'failed' });
    expect(await readJob(stack, job.id)).toEqual(before);
    // The route answers only after any signal it sends is taken; the history shows such a
    // signal once the workflow has no task scheduled or running (while one runs, Temporal holds
    // new events back from the history until it completes). Then count.
    await noWorkflowTaskPending(job.workflowId);
    expect(await signals(job.workflowId)).toBe(signalsBefore);
  });
});
