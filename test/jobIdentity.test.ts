import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { insertJobOrFindExisting } from '../src/db/jobs';
import { requestFingerprint } from '../src/domain/fingerprint';
import { jobWorkflowId } from '../src/domain/workflowId';
import { TEST_OWNER } from './support/identities';
import { startTestStack, type TestStack } from './support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function failureOf(workflowId: string, args: unknown): Promise<ApplicationFailure> {
  const handle = await stack.temporal.workflow.start('jobWorkflow', {
    workflowId,
    taskQueue: stack.taskQueue,
    args: [args],
  });
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  let cause: unknown = (error as WorkflowFailedError).cause;
  while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as Error).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

test('a workflow refuses to run a job whose row has a different intent', async () => {
  const intent = {
    type: 'summarize',
    input: { text: 'The stored intent. The only one.' },
    providers: ['simulator'],
    mode: 'exclusive' as const,
  };
  const key = 'identity-mismatch';
  const { job } = await insertJobOrFindExisting(stack.pool, {
    ownerId: TEST_OWNER,
    idempotencyKey: key,
    requestFingerprint: requestFingerprint({ ...intent, providers: null }),
    intent,
    workflowId: jobWorkflowId(TEST_OWNER, key),
  });
  const failure = await failureOf(jobWorkflowId(TEST_OWNER, key), {
    jobId: job.id,
    ownerId: TEST_OWNER,
    idempotencyKey: key,
    requestFingerprint: 'f'.repeat(64),
  });
  expect(failure.type).toBe('JobIdentityMismatch');
  expect(failure.message).toMatch(/requestFingerprint/);
  const { rows } = await stack.pool.query(
    'SELECT count(*)::int AS n FROM attempts WHERE job_id = $1',
    [job.id],
  );
  expect(rows[0].n).toBe(0);
});

test('a workflow refuses to run a job whose row is missing', async () => {
  const failure = await failureOf('job/owner-a@example.com/no-such-row', {
    jobId: '00000000-0000-4000-8000-000000000000',
    ownerId: TEST_OWNER,
    idempotencyKey: 'no-such-row',
    requestFingerprint: 'a'.repeat(64),
  });
  expect(failure.type).toBe('JobMissing');
});
