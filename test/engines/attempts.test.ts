import { signCallback } from '../../src/api/signatures';
import { notFoundGraceMs, type ProviderConfig } from '../../src/providers/provider';
import { inRolledBackTransaction } from '../support/database';
import { CALLBACK_SECRET, OPERATOR_TOKEN } from '../support/identities';
import { eventually } from '../support/polling';
import { providerSaw } from '../support/providerLedger';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { attemptRows, rowsOfJob } from '../support/rows';
import { certifyForSetup, startTestStack, type TestStack } from '../support/stack';
import { workflowStatus } from '../support/temporal';

/**
 * Exclusive attempts of a job with a side effect (a charge): a timeout is unknown and blocks;
 * each way of settling it; and the ledger shows one charge, whatever happened.
 */
const providers = (url: string): ProviderConfig[] => [
  // Each provider's callback secret is its own (refused at start otherwise).
  payProvider(url, 'pay', {
    timeoutMs: TIMES_OUT_SOON_MS,
    callbackSecretEnv: 'TEST_PAY_CALLBACK_SECRET',
  }),
  payProvider(url, 'pay-backup'),
  // Its calls outlast any test step: only the test decides when they end.
  payProvider(url, 'pay-patient', { timeoutMs: 120_000 }),
  // A hung call is cut off at its window soon (3 s), and believed over right then (no grace).
  payProvider(url, 'pay-hung', {
    timeoutMs: TIMES_OUT_SOON_MS,
    lateResultTimeoutMs: 3_000,
    notFoundGraceMs: 0,
  }),
  payProvider(url, 'pay-blind', {
    statusUrl: undefined,
    callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET',
  }),
  chatProvider(url, 'chat', 'sim-steady', { timeoutMs: TIMES_OUT_SOON_MS }),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    providers,
    env: { TEST_PAY_CALLBACK_SECRET: 'attempts-pay-callback-secret' },
  });
  // Failover only goes to certified providers.
  await certifyForSetup(
    stack,
    ['pay', 'pay-backup', 'pay-blind', 'pay-patient'].map((name) => [name, 'charge'] as const),
  );
});
afterAll(async () => {
  await stack?.stop();
});

interface Job {
  id: string;
  status: string;
  workflowId: string;
  result: Record<string, unknown> | null;
  completedBy: string | null;
  attempts: Array<{ id: string; state: string; provider: string }>;
}

let counter = 0;
async function charge(plan: string[], account = `acct-${++counter}`): Promise<Job> {
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': `charge-${counter}-${Date.now()}` },
    body: {
      type: 'charge',
      input: { amountCents: 1250, currency: 'EUR', account },
      providers: plan,
    },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Job;
}

const getJob = async (id: string): Promise<Job> =>
  (await (await stack.request('GET', `/v1/jobs/${id}`)).json()) as Job;
const untilStatus = (id: string, status: string, timeoutMs = 30_000) =>
  eventually(
    () => getJob(id),
    (job) => job.status === status,
    timeoutMs,
  );

async function operator(method: string, path: string, body: unknown): Promise<Response> {
  return stack.request(method, `/v1/operator${path}`, { body, token: OPERATOR_TOKEN });
}

test('a provoked timeout makes the attempt and the job unknown, blocks new attempts, and the late success wins', async () => {
  // The charge is made and answered only when the test lets it: late, whatever the machine's speed.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'late-success' } });
  const job = await charge(['pay', 'pay-backup']);

  const blocked = await untilStatus(job.id, 'unknown');
  expect(blocked.attempts).toEqual([
    expect.objectContaining({ id: `${job.id}:1`, state: 'unknown' }),
  ]);

  // The user's "try again" is refused while the first attempt may still take effect…
  const retry = await stack.request('POST', `/v1/jobs/${job.id}/attempts`, {
    body: { provider: 'pay-backup' },
  });
  expect(retry.status).toBe(409);
  expect(retry.headers.get('retry-after')).toBe('60');
  expect(await retry.json()).toMatchObject({
    type: '/problems/attempt-in-flight',
    blockingAttempt: { attemptId: `${job.id}:1`, state: 'unknown' },
  });
  // …and so is a second in-flight attempt row, by the database itself.
  await expect(
    inRolledBackTransaction(stack.pool, (client) =>
      client.query(
        `INSERT INTO attempts (id, job_id, seq, provider, exclusive, read_version) VALUES ($1, $2, 2, 'pay-backup', true, 0)`,
        [`${job.id}:2`, job.id],
      ),
    ),
  ).rejects.toMatchObject({ code: '23505', constraint: 'attempts_one_in_flight_per_job' });

  // The call kept running in the worker; its late answer goes through the CAS and wins.
  stack.simulator.openGate('late-success');
  const done = await untilStatus(job.id, 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:1`);
  expect(done.attempts).toHaveLength(1);
  expect(done.result).toMatchObject({
    amountCents: 1250,
    currency: 'EUR',
    idempotencyKey: `${job.id}:1`,
  });
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`],
    effects: [`${job.id}:1`],
  });
});

test('a refused try-again names its blocking attempt as the attempt’s row has it, even before the workflow hears: a row already unknown advises a minute’s wait', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'row-ahead' } });
  const job = await charge(['pay-patient', 'pay-backup']);
  const firstId = `${job.id}:1`;
  await eventually(
    () => getJob(job.id),
    (j) => j.attempts[0]?.state === 'running',
  );
  // What the worker writes when a call is cut off, before its workflow learns of it: the row
  // is unknown while the workflow still has the attempt running.
  await stack.pool.query(`UPDATE attempts SET state = 'unknown' WHERE id = $1`, [firstId]);

  const retry = await stack.request('POST', `/v1/jobs/${job.id}/attempts`, {
    body: { provider: 'pay-backup' },
  });
  expect(retry.status).toBe(409);
  expect(retry.headers.get('retry-after')).toBe('60');
  expect(await retry.json()).toMatchObject({
    type: '/problems/attempt-in-flight',
    blockingAttempt: { attemptId: firstId, state: 'unknown' },
  });

  // The held call's answer still goes through the compare-and-swap and wins.
  stack.simulator.openGate('row-ahead');
  const done = await untilStatus(job.id, 'succeeded');
  expect(done.completedBy).toBe(firstId);
});

test('when the provider’s status says the attempt was never processed, it fails, and only then the fallback runs', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_before' } });
  const job = await charge(['pay', 'pay-backup']);
  const done = await untilStatus(job.id, 'succeeded');
  const firstId = `${job.id}:1`;
  const [first, second] = await attemptRows(stack.pool, job.id);
  expect(first).toMatchObject({ provider: 'pay', state: 'failed' });
  expect(second).toMatchObject({ provider: 'pay-backup', state: 'succeeded' });
  expect(done.completedBy).toBe(`${job.id}:2`);

  // Attempt 1's charge met the dropped connection: a call that ended without an answer.
  const seen = stack.simulator.requests().filter((r) => r.idempotencyKey === firstId);
  expect(seen.filter((r) => r.route === 'charge').map((r) => r.fault)).toEqual(['drop_before']);
  // It failed on the status lookup's word ("never processed"), not on the dropped connection's.
  const {
    rows: [row],
  } = await stack.pool.query<{
    error: { code: string };
    call_ended_at: Date;
    first_not_found_at: Date;
    finished_at: Date;
  }>('SELECT error, call_ended_at, first_not_found_at, finished_at FROM attempts WHERE id = $1', [
    firstId,
  ]);
  expect(row?.error).toMatchObject({ code: 'never_processed' });
  // The provider was asked after the call had ended, at least twice, and "no record" was
  // believed only the provider's grace after it was first noted (PostgreSQL's clock alone).
  const callEnded = row!.call_ended_at.getTime();
  const lookups = seen.filter((r) => r.route === 'charge-status').map((r) => Date.parse(r.at));
  expect(lookups.length).toBeGreaterThanOrEqual(2);
  for (const at of lookups) expect(at).toBeGreaterThanOrEqual(callEnded);
  expect(row!.first_not_found_at.getTime()).toBeGreaterThanOrEqual(callEnded);
  expect(row!.finished_at.getTime() - row!.first_not_found_at.getTime()).toBeGreaterThanOrEqual(
    notFoundGraceMs(stack.registry.get('pay').config),
  );

  // The fallback was created only after the first attempt was settled as failed, and its charge
  // left after the last status lookup of attempt 1.
  expect(second!.created_at.getTime()).toBeGreaterThanOrEqual(first!.finished_at!.getTime());
  const fallbackSent = stack.simulator
    .requests()
    .filter((r) => r.route === 'charge' && r.idempotencyKey === `${job.id}:2`)
    .map((r) => Date.parse(r.at));
  expect(fallbackSent).toHaveLength(1);
  expect(fallbackSent[0]).toBeGreaterThanOrEqual(Math.max(...lookups));
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [firstId, `${job.id}:2`],
    effects: [`${job.id}:2`],
  });
});

test('when the connection drops after the charge was made, the attempt is unknown and the provider’s status lookup settles it succeeded with that charge: one charge, no fallback', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
  const job = await charge(['pay', 'pay-backup']);
  const done = await untilStatus(job.id, 'succeeded');
  const attemptId = `${job.id}:1`;

  // The dropped connection left the attempt unknown (its error says so), not failed…
  const [only, ...others] = await attemptRows(stack.pool, job.id);
  expect(others).toEqual([]);
  expect(only).toMatchObject({ id: attemptId, provider: 'pay', state: 'succeeded' });
  const { rows } = await stack.pool.query<{ error: { code: string; certainty: string } }>(
    'SELECT error FROM attempts WHERE id = $1',
    [attemptId],
  );
  expect(rows[0]?.error).toMatchObject({ code: 'connection', certainty: 'ambiguous' });
  // …and the status lookup found the charge: it is the job's result.
  const lookups = stack.simulator
    .requests()
    .filter((r) => r.route === 'charge-status' && r.idempotencyKey === attemptId);
  expect(lookups.length).toBeGreaterThanOrEqual(1);
  const charged = (await (
    await fetch(`${stack.simulator.url}/v1/charges/by-key/${encodeURIComponent(attemptId)}`)
  ).json()) as Record<string, unknown>;
  expect(done.completedBy).toBe(attemptId);
  expect(done.result).toEqual(charged);
  // One charge request, one charge; the fallback never ran.
  expect(providerSaw(stack, job.id)).toEqual({ requests: [attemptId], effects: [attemptId] });
});

test('an operator who knows the hung attempt never charged resolves it failed: held while the call may still land, applied once it is cut off, and the fallback runs', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await charge(['pay-hung', 'pay-backup']);
  await untilStatus(job.id, 'unknown');
  // The status lookup says "still processing": nothing settles it by itself.
  const blocked = await eventually(
    () => workflowStatus(stack, job.workflowId),
    (status) => /still being processed|HTTP 409/.test(status.waitingOn),
  );
  expect(blocked.status).toBe('unknown');
  expect((await getJob(job.id)).status).toBe('unknown');

  const resolved = await operator('POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'failed',
    reason: 'bank confirms no charge',
  });
  expect(resolved.status).toBe(200);
  // The call is still out (its window not over): the verdict is held, not applied.
  expect(await resolved.json()).toEqual({
    attemptId: `${job.id}:1`,
    state: 'unknown',
    held: true,
  });

  const done = await untilStatus(job.id, 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:2`);
  expect((await attemptRows(stack.pool, job.id)).map((a) => a.state)).toEqual([
    'failed',
    'succeeded',
  ]);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`, `${job.id}:2`],
    effects: [`${job.id}:2`],
  });
});

test('an operator resolves an unknown attempt as succeeded with its result, which goes through the CAS', async () => {
  // Charged, then the connection dropped; this provider has no status lookup.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
  const job = await charge(['pay-blind', 'pay-backup']);
  await untilStatus(job.id, 'unknown');
  // The operator reads the charge off the provider's dashboard (here: its status endpoint).
  const charged = (await (
    await fetch(`${stack.simulator.url}/v1/charges/by-key/${encodeURIComponent(`${job.id}:1`)}`)
  ).json()) as Record<string, unknown>;

  const beforeWrong = await rowsOfJob(stack, job.id);
  const wrong = await operator('POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'succeeded',
    reason: 'dashboard',
    result: { ...charged, amountCents: 1 },
  });
  expect(wrong.status).toBe(400);
  expect(await rowsOfJob(stack, job.id)).toEqual(beforeWrong);
  const resolved = await operator('POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'succeeded',
    reason: 'seen on the dashboard',
    result: charged,
  });
  expect(await resolved.json()).toEqual({ attemptId: `${job.id}:1`, state: 'succeeded' });

  const done = await untilStatus(job.id, 'succeeded');
  expect(done.result).toEqual(charged);
  expect(done.attempts).toHaveLength(1);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`],
    effects: [`${job.id}:1`],
  });
  // Settled attempts cannot be resolved again, and the refusal changes nothing.
  const settled = await rowsOfJob(stack, job.id);
  const again = await operator('POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'failed',
    reason: 'changed my mind',
  });
  expect(again.status).toBe(409);
  expect(await rowsOfJob(stack, job.id)).toEqual(settled);
});

/** How many `charge` jobs that succeeded this API process has seen end (it ended them). */
async function chargesEndedByApi(): Promise<number> {
  const text = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('onejob_job_duration_seconds_count{') &&
        l.includes('type="charge"') &&
        l.includes('status="succeeded"'),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

test('a signed provider callback settles an unknown attempt, and the API that recorded it observes the job’s end; a bad signature is refused', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
  const job = await charge(['pay-blind']);
  await untilStatus(job.id, 'unknown');
  const charged = (await (
    await fetch(`${stack.simulator.url}/v1/charges/by-key/${encodeURIComponent(`${job.id}:1`)}`)
  ).json()) as Record<string, unknown>;
  const body = JSON.stringify({ attemptId: `${job.id}:1`, status: 'succeeded', output: charged });

  const forged = await fetch(`${stack.apiUrl}/v1/callbacks/pay-blind`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'onejob-signature': signCallback('not-the-secret', body),
    },
    body,
  });
  expect(forged.status).toBe(401);
  expect((await getJob(job.id)).status).toBe('unknown');

  const endedBefore = await chargesEndedByApi();
  const signed = await fetch(`${stack.apiUrl}/v1/callbacks/pay-blind`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'onejob-signature': signCallback(CALLBACK_SECRET, body),
    },
    body,
  });
  expect(signed.status).toBe(200);
  const done = await untilStatus(job.id, 'succeeded');
  expect(done.result).toEqual(charged);
  expect(await chargesEndedByApi()).toBe(endedBefore + 1);
});

test('a result arriving after an operator cancelled the job is discarded and logged as a race', async () => {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hold', gate: 'after-cancel' } });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': `cancel-${Date.now()}` },
    body: {
      type: 'summarize',
      input: { text: 'Cancelled jobs keep no results. Late answers are dropped.' },
      providers: ['chat'],
    },
  });
  const job = (await created.json()) as Job;
  await untilStatus(job.id, 'unknown');

  const cancelled = await operator('POST', `/jobs/${job.id}/cancel`, {
    reason: 'customer withdrew',
  });
  expect(cancelled.status).toBe(200);
  expect((await getJob(job.id)).status).toBe('cancelled');
  const cancelledRows = await rowsOfJob(stack, job.id);
  const twice = await operator('POST', `/jobs/${job.id}/cancel`, { reason: 'again' });
  expect(twice.status).toBe(409);
  expect(await rowsOfJob(stack, job.id)).toEqual(cancelledRows);

  // The late answer arrives, loses the CAS (the version moved when the job was cancelled).
  stack.simulator.openGate('after-cancel');
  const lost = await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'lost',
  );
  expect(lost).toHaveLength(1);
  const { rows } = await stack.pool.query(
    'SELECT status_job.terminal_status, status_job.result, r.winning_attempt_id FROM jobs status_job JOIN race_events r ON r.job_id = status_job.id WHERE status_job.id = $1',
    [job.id],
  );
  expect(rows).toEqual([{ terminal_status: 'cancelled', result: null, winning_attempt_id: null }]);
  // …and the operator's log says so, naming the job and the attempt.
  const raceLogs = await eventually(
    async () => stack.serviceLogs().filter((line) => line.event === 'race_lost'),
    (lines) => lines.some((line) => line.jobId === job.id),
  );
  expect(raceLogs.filter((line) => line.jobId === job.id)).toEqual([
    expect.objectContaining({
      event: 'race_lost',
      jobId: job.id,
      attemptId: `${job.id}:1`,
      workflowId: job.workflowId,
      jobStatus: 'cancelled',
    }),
  ]);
});

test('operator routes need an operator token, and owners’ tokens are not one', async () => {
  const response = await stack.request(
    'POST',
    '/v1/operator/jobs/00000000-0000-4000-8000-000000000000/cancel',
    { body: { reason: 'x' } },
  );
  expect(response.status).toBe(401);
});

test('a definite failure moves on to the fallback; when every provider fails the job fails', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'fail_before', status: 402 } });
  stack.simulator.inject({ route: 'charge', fault: { kind: 'fail_before', status: 400 } });
  const job = await charge(['pay', 'pay-backup']);
  const done = await untilStatus(job.id, 'failed');
  expect(done.attempts.map((a) => a.state)).toEqual(['failed', 'failed']);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`, `${job.id}:2`],
    effects: [],
  });
  const retry = await stack.request('POST', `/v1/jobs/${job.id}/attempts`, { body: {} });
  expect(retry.status).toBe(409);
  expect(await retry.json()).toMatchObject({ type: '/problems/job-terminal' });
});
