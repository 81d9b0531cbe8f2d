import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { harness } from './harness';
import { startTestStack, TEST_OWNER, type TestStack } from './helpers';

/** A service's own workflow starts a job as its child and awaits it (test/workflows/orderWorkflow.ts). */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

test('a job started twice from another workflow is one job, and the parent gets its result', async () => {
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'workflows', 'orderWorkflow.ts'),
    logger: new DefaultLogger('WARN'),
  });
  const connection = await NativeConnection.connect({ address: harness().temporalAddress });
  const parentQueue = `${stack.taskQueue}-orders`;
  const worker = await Worker.create({
    connection,
    taskQueue: parentQueue,
    workflowBundle: bundle,
  });
  try {
    const outcome = await worker.runUntil(
      stack.temporal.workflow.execute('orderWorkflow', {
        workflowId: `order-${Date.now()}`,
        taskQueue: parentQueue,
        args: [
          {
            owner: TEST_OWNER,
            key: 'child-order-1',
            text: 'A parent asks. The child job answers once.',
            jobTaskQueue: stack.taskQueue,
          },
        ],
      }),
    );
    expect(outcome).toMatchObject({ secondStartRefused: true, result: { status: 'succeeded' } });
    const { rows } = await stack.pool.query(
      'SELECT id FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
      [TEST_OWNER, 'child-order-1'],
    );
    expect(rows).toEqual([{ id: (outcome as { result: { jobId: string } }).result.jobId }]);
    const calls = stack.simulator
      .ledger()
      .filter((e) => e.idempotencyKey.startsWith(`${rows[0].id}:`));
    expect(calls).toEqual([expect.objectContaining({ executions: 1 })]);
  } finally {
    await connection.close();
  }
});
