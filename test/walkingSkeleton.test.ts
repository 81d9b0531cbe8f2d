import { jobWorkflowId } from '../src/domain/workflowId';
import { TEST_OWNER } from './support/identities';
import { providerSaw } from './support/providerLedger';
import { startTestStack, type TestStack } from './support/stack';

interface JobBody {
  id: string;
  status: string;
  workflowId: string;
  result: { summary: string } | null;
  completedBy: string | null;
  attempts: Array<{ id: string; seq: number; provider: string; state: string }>;
}

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const TEXT =
  'Retries and fallbacks are attempts under one job. A timeout is an unknown outcome, never a silent failure. ' +
  'Exactly one attempt records its result.';

test('a POSTed job runs through the workflow, the simulator and the CAS, and GET shows it succeeded', async () => {
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'skeleton-1' },
    body: { type: 'summarize', input: { text: TEXT } },
  });
  expect(created.status).toBe(201);
  const job = (await created.json()) as JobBody;
  expect(created.headers.get('location')).toBe(`/v1/jobs/${job.id}`);
  expect(job.workflowId).toBe(jobWorkflowId(TEST_OWNER, 'skeleton-1'));

  const done = await stack.request('GET', `/v1/jobs/${job.id}?wait=30`);
  expect(done.status).toBe(200);
  const finished = (await done.json()) as JobBody;
  expect(finished.status).toBe('succeeded');
  expect(finished.result?.summary).toBe('Retries and fallbacks are attempts under one job.');
  expect(finished.attempts).toEqual([
    expect.objectContaining({
      id: `${job.id}:1`,
      seq: 1,
      provider: 'simulator',
      state: 'succeeded',
    }),
  ]);
  expect(finished.completedBy).toBe(`${job.id}:1`);

  // The row itself: written once, by the compare-and-swap, moving the version from 0 to 1.
  const { rows } = await stack.pool.query(
    'SELECT version, completed_by, terminal_status, result FROM jobs WHERE id = $1',
    [job.id],
  );
  expect(rows[0]).toEqual({
    version: 1,
    completed_by: `${job.id}:1`,
    terminal_status: 'succeeded',
    result: finished.result,
  });

  // The workflow with the derived id ran to completion and names the same winner.
  const handle = stack.temporal.workflow.getHandle(job.workflowId);
  await expect(handle.result()).resolves.toEqual({
    jobId: job.id,
    status: 'succeeded',
    completedBy: `${job.id}:1`,
  });
  const description = await handle.describe();
  expect(description.taskQueue).toBe(stack.taskQueue);

  // The provider saw the attempt id as its idempotency key, and did the work once.
  expect(providerSaw(stack, job.id, 'chat')).toEqual({
    requests: [`${job.id}:1`],
    effects: [`${job.id}:1`],
  });
});

test('a job without a token is refused with a problem document', async () => {
  const response = await fetch(`${stack.apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'k' },
    body: JSON.stringify({ type: 'summarize', input: { text: TEXT } }),
  });
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(await response.json()).toMatchObject({ type: '/problems/unauthorized', status: 401 });
  const { rows } = await stack.pool.query(
    'SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = $1',
    ['k'],
  );
  expect(rows[0].n).toBe(0);
});
