import { chargeBody, createJob, freshKey, untilJob, type JobView } from '../support/jobs';
import { eventually } from '../support/polling';
import { startPrivateTemporal, type PrivateTemporal } from '../support/privateTemporal';
import { providerSaw } from '../support/providerLedger';
import { chatProvider, payProvider } from '../support/providers';
import { startTestStack, type TestStack } from '../support/stack';
import { runsOfWorkflow } from '../support/temporal';

/**
 * The Temporal server killed (SIGKILL) while jobs run: one blocked in `unknown`, one with a
 * charge in flight, one just created; a create arrives while it is down. Started again on the
 * same state, every job ends as it would have: one winner, one charge, one job per key.
 * On the production engine the state is in PostgreSQL; on the dev server, in its SQLite file.
 */
let temporal: PrivateTemporal;
let stack: TestStack;
beforeAll(async () => {
  temporal = await startPrivateTemporal('restart');
  stack = await startTestStack({
    temporalAddress: temporal.address,
    providers: (url) => [
      // Times out at once: its held charge leaves the attempt unknown.
      payProvider(url, 'pay', { timeoutMs: 500, lateResultTimeoutMs: 120_000 }),
      // Waits a minute: its held charge is in flight when the server dies.
      payProvider(url, 'pay-patient', { timeoutMs: 60_000, lateResultTimeoutMs: 120_000 }),
      chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 30_000 }),
    ],
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '500', ONEJOB_RECONCILE_MAX_DELAY_MS: '1000' },
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await temporal?.stop();
});

const charges = (job: JobView) => providerSaw(stack, job.id).effects;

test('a SIGKILL of the Temporal server mid-run loses nothing: every job ends with one winner, one charge and one workflow', async () => {
  // Blocked in unknown: the charge is held at the provider past the attempt's timeout.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'unknown' } });
  const blocked = await createJob(stack, chargeBody(['pay']));
  await untilJob(stack, blocked.id, (job) => job.status === 'unknown');

  // Mid-charge: the request reached the provider, which has not answered yet.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'in-flight' } });
  const inFlight = await createJob(stack, chargeBody(['pay-patient']));
  await eventually(
    async () => providerSaw(stack, inFlight.id).requests,
    (requests) => requests.length === 1,
  );
  const justCreated = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Created a moment before the engine dies. Still runs once.' },
  });

  await temporal.kill();

  // While it is down: the charge in flight is answered (its worker records it in PostgreSQL),
  // and a create is refused with 503 without losing its job row.
  stack.simulator.openGate('in-flight');
  await eventually(
    async () => charges(inFlight).length,
    (made) => made === 1,
  );
  const key = freshKey('while-down');
  const body = { type: 'summarize', input: { text: 'Sent while the engine is down.' } };
  const whileDown = await stack.request('POST', '/v1/jobs', {
    body,
    headers: { 'idempotency-key': key },
  });
  expect(whileDown.status).toBe(503);
  expect(await whileDown.json()).toMatchObject({ type: '/problems/service-unavailable' });
  const kept = await stack.pool.query<{ id: string }>(
    'SELECT id FROM jobs WHERE idempotency_key = $1',
    [key],
  );
  expect(kept.rows).toHaveLength(1);

  await temporal.start();

  // The client's retry of the refused create is the same job, and it runs.
  const retried = await eventually(
    () => stack.request('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } }),
    (response) => response.status !== 503,
    60_000,
  );
  // The row was kept: the retry is the replay of that job (200), not a new one (201).
  expect(retried.status).toBe(200);
  expect(retried.headers.get('idempotent-replayed')).toBe('true');
  const lateCreated = (await retried.json()) as JobView;
  expect(lateCreated.id).toBe(kept.rows[0]!.id);

  // The unknown charge's answer comes now; the job settles on it.
  stack.simulator.openGate('unknown');

  const finished = await Promise.all(
    [blocked, inFlight, justCreated, lateCreated].map((job) =>
      untilJob(stack, job.id, (j) => j.status === 'succeeded', 90_000),
    ),
  );
  for (const job of finished) {
    expect(job.completedBy).toBe(`${job.id}:1`);
    expect(job.attempts.filter((a) => a.state === 'succeeded')).toHaveLength(1);
    expect(await runsOfWorkflow(stack, job.workflowId)).toHaveLength(1);
  }
  expect(charges(blocked)).toEqual([`${blocked.id}:1`]);
  expect(charges(inFlight)).toEqual([`${inFlight.id}:1`]);
  const { rows } = await stack.pool.query(
    'SELECT owner_id, idempotency_key, count(*)::int AS n FROM jobs GROUP BY 1, 2 HAVING count(*) > 1',
  );
  expect(rows).toEqual([]);
}, 240_000);
