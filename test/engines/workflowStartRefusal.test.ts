import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { WorkflowStartRefusedError } from '../../src/service/errors';
import { createJob } from '../../src/service/jobs';
import { ensureSearchAttributes } from '../../src/temporal/searchAttributes';
import { uniqueName } from '../support/database';
import { harness } from '../support/harness';
import { TEST_OWNER } from '../support/identities';
import { eventually } from '../support/polling';
import { startTestStack, type TestStack } from '../support/stack';

// A namespace without our search attributes: Temporal refuses every start of a job workflow
// there (INVALID_ARGUMENT), as a misconfigured production namespace would.
const namespace = uniqueName('onejob-refusal');
let connection: Connection;
let stack: TestStack;

beforeAll(async () => {
  connection = await Connection.connect({ address: harness().temporalAddress });
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs(24 * 3600 * 1000),
  });
  // Usable once the frontend's namespace cache has it.
  await eventually(
    () =>
      connection.workflowService
        .listWorkflowExecutions({ namespace, pageSize: 1 })
        .then(() => true)
        .catch(() => false),
    (usable) => usable,
  );
  stack = await startTestStack({ namespace });
});
afterAll(async () => {
  await stack?.stop();
  await connection?.close();
});

const body = { type: 'summarize', input: { text: 'The engine says no. Then it says yes.' } };
const create = () =>
  stack.request('POST', '/v1/jobs', { body, headers: { 'idempotency-key': 'refused-start' } });

test('a workflow the engine refuses to start is a 503 that a retry heals, never a 500 or a lost job', async () => {
  const refused = await create();
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('30');
  const problem = (await refused.json()) as { type: string; jobId: string; detail: string };
  expect(problem.type).toBe('/problems/workflow-start-refused');
  // The engine's own words are for operators (the log), not for owners.
  expect(problem.detail).toMatch(/temporarily unavailable/);
  expect(JSON.stringify(problem)).not.toMatch(/JobOwner|search attribute|engineReason/i);

  // The row is kept, unadmitted, and a retry before the fix is refused the same way.
  const again = await create();
  expect(again.status).toBe(503);
  expect(((await again.json()) as { jobId: string }).jobId).toBe(problem.jobId);
  const { rows } = await stack.pool.query(
    'SELECT id, admitted_at FROM jobs WHERE idempotency_key = $1',
    ['refused-start'],
  );
  expect(rows).toEqual([{ id: problem.jobId, admitted_at: null }]);
  expect(
    stack
      .serviceLogs()
      .some(
        (line) =>
          line.msg === 'Temporal refused to start a job workflow' &&
          /JobOwner|search attribute/i.test(String(line.engineReason)),
      ),
  ).toBe(true);

  // The operator registers the search attributes; the client's next retry starts the same job.
  await ensureSearchAttributes(connection, namespace);
  const healed = await eventually(create, (response) => response.status !== 503);
  expect(healed.status).toBe(200);
  const job = (await healed.json()) as { id: string };
  expect(job.id).toBe(problem.jobId);
  const done = await stack.request('GET', `/v1/jobs/${job.id}?wait=30`);
  expect(((await done.json()) as { status: string }).status).toBe('succeeded');
});

test('a namespace that does not exist is a refusal with its name, and the job row is kept for the retry', async () => {
  const missing = uniqueName('onejob-missing');
  const request = {
    ownerId: TEST_OWNER,
    idempotencyKey: 'missing-namespace',
    type: 'summarize',
    input: { text: 'Nowhere to run. Kept for later.' },
  };
  const deps = {
    pool: stack.pool,
    temporal: new Client({ connection, namespace: missing }),
    taskQueue: stack.taskQueue,
    providers: stack.registry,
  };
  const refusal = await createJob(deps, request).catch((error: unknown) => error);
  expect(refusal).toBeInstanceOf(WorkflowStartRefusedError);
  expect((refusal as WorkflowStartRefusedError).reason).toContain(missing);
  const { rows } = await stack.pool.query(
    'SELECT admitted_at FROM jobs WHERE idempotency_key = $1',
    ['missing-namespace'],
  );
  expect(rows).toEqual([{ admitted_at: null }]);
});
