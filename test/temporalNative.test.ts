import { IdempotencyKeyReuseError, startJob } from '../src/client';
import { jobWorkflowId } from '../src/domain/workflowId';
import { startTestStack, TEST_OWNER, type TestStack } from './helpers';

/** Services that run Temporal start jobs directly, and meet the HTTP API on the same job. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const summarize = (text: string) => ({ type: 'summarize', input: { text } });

async function oneJobOneWorkflowOneCall(key: string, jobId: string): Promise<void> {
  const { rows } = await stack.pool.query(
    'SELECT id FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
    [TEST_OWNER, key],
  );
  expect(rows).toEqual([{ id: jobId }]);
  const done = (await (await stack.request('GET', `/v1/jobs/${jobId}?wait=30`)).json()) as {
    status: string;
  };
  expect(done.status).toBe('succeeded');
  let runs = 0;
  for (let i = 0; i < 50 && runs === 0; i++) {
    runs = (await stack.temporal.workflow.count(`WorkflowId = "${jobWorkflowId(TEST_OWNER, key)}"`))
      .count;
    if (runs === 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(runs).toBe(1);
  const calls = stack.simulator.ledger().filter((e) => e.idempotencyKey.startsWith(`${jobId}:`));
  expect(calls).toEqual([expect.objectContaining({ executions: 1 })]);
}

test('a Temporal-native start writes the job row itself and runs it', async () => {
  const started = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'native-only',
    taskQueue: stack.taskQueue,
    ...summarize('Started from Temporal. No HTTP involved.'),
  });
  await expect(started.result()).resolves.toMatchObject({
    jobId: started.jobId,
    status: 'succeeded',
  });
  await oneJobOneWorkflowOneCall('native-only', started.jobId);
});

test('HTTP first, then the Temporal-native start with the same (owner, key, intent): one job', async () => {
  const body = summarize('HTTP came first. Temporal joins it.');
  const created = (await (
    await stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': 'http-then-native' },
      body,
    })
  ).json()) as { id: string };
  const started = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'http-then-native',
    taskQueue: stack.taskQueue,
    ...body,
  });
  expect(started.jobId).toBe(created.id);
  await oneJobOneWorkflowOneCall('http-then-native', created.id);
  // Once the job's workflow has ended, the same start still finds the same job.
  const again = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'http-then-native',
    taskQueue: stack.taskQueue,
    ...body,
  });
  expect(again.jobId).toBe(created.id);
});

test('Temporal-native first, then HTTP with the same (owner, key, intent): one job', async () => {
  const body = summarize('Temporal came first. HTTP joins it.');
  const started = await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'native-then-http',
    taskQueue: stack.taskQueue,
    ...body,
  });
  const replay = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'native-then-http' },
    body,
  });
  expect(replay.status).toBe(200);
  expect(((await replay.json()) as { id: string }).id).toBe(started.jobId);
  await oneJobOneWorkflowOneCall('native-then-http', started.jobId);
});

test('a different intent under the same key is refused on both paths', async () => {
  await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'mismatch-a' },
    body: summarize('The first intent. Kept.'),
  });
  await expect(
    startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: 'mismatch-a',
      taskQueue: stack.taskQueue,
      ...summarize('Another intent. Refused.'),
    }),
  ).rejects.toBeInstanceOf(IdempotencyKeyReuseError);

  await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: 'mismatch-b',
    taskQueue: stack.taskQueue,
    ...summarize('The first intent. Kept.'),
  });
  const conflict = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'mismatch-b' },
    body: summarize('Another intent. Refused.'),
  });
  expect(conflict.status).toBe(409);
  expect(await conflict.json()).toMatchObject({ type: '/problems/idempotency-key-reuse' });
});

test('an invalid intent started from Temporal is refused with the reason, and writes nothing', async () => {
  await expect(
    startJob(stack.temporal, {
      owner: TEST_OWNER,
      idempotencyKey: 'native-invalid',
      taskQueue: stack.taskQueue,
      type: 'summarize',
      input: { text: 42 },
    }),
  ).rejects.toThrow(/invalid-input/);
  const { rows } = await stack.pool.query(
    `SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'native-invalid'`,
  );
  expect(rows[0].n).toBe(0);
});
