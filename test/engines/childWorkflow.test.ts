import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import path from 'node:path';
import { callSnapshot, inFlight, untilRequestReceived } from '../support/callInFlight';
import { harness } from '../support/harness';
import { TEST_OWNER } from '../support/identities';
import { readJob, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { providerSaw } from '../support/providerLedger';
import { chatProvider, payProvider } from '../support/providers';
import { startTestStack, type TestStack } from '../support/stack';
import { untilWorkflowClosed } from '../support/temporal';
import type { Order } from '../workflows/orderWorkflow';

/** A service's own workflow starts a job as its child (test/workflows/orderWorkflow.ts). */
let stack: TestStack;
let worker: Worker;
let running: Promise<void>;
let connection: NativeConnection;
let parentQueue: string;

beforeAll(async () => {
  stack = await startTestStack({
    providers: (url) => [
      chatProvider(url, 'simulator', 'sim-steady', { timeoutMs: 10_000 }),
      // Room for a parent to end while its child's charge is held at the provider.
      payProvider(url, 'simulator-pay', { timeoutMs: 30_000, lateResultTimeoutMs: 60_000 }),
    ],
  });
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, '..', 'workflows', 'orderWorkflow.ts'),
    logger: new DefaultLogger('WARN'),
  });
  connection = await NativeConnection.connect({ address: harness().temporalAddress });
  parentQueue = `${stack.taskQueue}-orders`;
  worker = await Worker.create({ connection, taskQueue: parentQueue, workflowBundle: bundle });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await stack?.stop();
});

const jobOfKey = async (key: string): Promise<string | undefined> =>
  (
    await stack.pool.query<{ id: string }>(
      'SELECT id FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
      [TEST_OWNER, key],
    )
  ).rows[0]?.id;

function startOrder(workflow: string, order: Omit<Order, 'owner' | 'jobTaskQueue'>) {
  return stack.temporal.workflow.start(workflow, {
    workflowId: `order-${order.key}`,
    taskQueue: parentQueue,
    args: [{ owner: TEST_OWNER, jobTaskQueue: stack.taskQueue, ...order }],
  });
}

test('a job started twice from another workflow is one job, and the parent gets its result', async () => {
  const parent = await startOrder('orderWorkflow', {
    key: 'child-order-1',
    text: 'A parent asks. The child job answers once.',
  });
  const outcome = await parent.result();
  expect(outcome).toMatchObject({ secondStartRefused: true, result: { status: 'succeeded' } });
  const jobId = await jobOfKey('child-order-1');
  expect(jobId).toBe((outcome as { result: { jobId: string } }).result.jobId);
  expect(providerSaw(stack, jobId!, 'chat')).toEqual({
    requests: [`${jobId}:1`],
    effects: [`${jobId}:1`],
  });
});

test('a parent that ends while its child job is charging does not kill the job: it completes with one charge', async () => {
  // The provider works on the charge and answers only when the gate opens: after the parent ended.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'parent-ended' } });
  const parent = await startOrder('orderEndedWhenTold', {
    key: 'child-charge-1',
    charge: { amountCents: 700, currency: 'EUR', account: 'acct-child' },
  });
  const jobId = await eventually(
    () => jobOfKey('child-charge-1'),
    (id) => id !== undefined,
  );
  const attemptId = `${jobId}:1`;
  // Charging: the attempt is running, the provider has the request and has not answered.
  expect(await untilRequestReceived(stack, attemptId)).toEqual(inFlight(attemptId));

  await parent.signal('endOrder');
  await parent.result();
  expect(await untilWorkflowClosed(stack, parent.workflowId)).toBe('COMPLETED');
  // The parent ended while the charge was in flight, and its job workflow runs on.
  expect(await callSnapshot(stack, attemptId)).toEqual(inFlight(attemptId));
  const { workflowId } = await readJob(stack, jobId!);
  const child = await stack.temporal.workflow.getHandle(workflowId).describe();
  expect(child.status.name).toBe('RUNNING');

  stack.simulator.openGate('parent-ended');
  const done = await untilJob(stack, jobId!, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(attemptId);
  expect(providerSaw(stack, jobId!)).toEqual({
    requests: [attemptId],
    effects: [attemptId],
  });
});

test('a parent that cancels its child job is an operator cancel: the job row ends cancelled', async () => {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hang' } });
  const parent = await startOrder('cancellableOrder', {
    key: 'child-cancel-1',
    text: 'The customer withdraws. The job must end with the order.',
  });
  const jobId = await eventually(
    () => jobOfKey('child-cancel-1'),
    (id) => id !== undefined,
  );
  await untilJob(stack, jobId!, (j) => j.attempts.length > 0);
  await parent.signal('cancelOrder');
  expect(await parent.result()).toEqual({ result: null, cancelled: true });
  const done = await untilJob(stack, jobId!, (j) => j.status === 'cancelled');
  expect(done.failure).toMatchObject({ code: 'cancelled', operator: 'temporal' });
  expect(await untilWorkflowClosed(stack, done.workflowId)).toBe('CANCELLED');
});
