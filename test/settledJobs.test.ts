import { recordAttemptResultIn } from '../src/db/compareAndSwap';
import type { JobWorkflowResult } from '../src/workflows/definitions';
import { holdAttemptWrites, holdTransaction } from './support/barriers';
import { createJob, operator, readJob } from './support/jobs';
import { eventually } from './support/polling';
import { requestsFor } from './support/providerLedger';
import { chatProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';
import { untilWorkflowClosed } from './support/temporal';

/**
 * Once a job is settled, nothing more is sent for it and its workflow ends: whether the
 * settlement came through the workflow (an operator's cancel) or behind its back (a result
 * recorded by a late call or a callback whose nudge has not arrived yet).
 */
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 20_000 }),
    chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 20_000 }),
  ],
  hedgeDelayMs: 1_500,
  certify: [['chat-backup', 'summarize']],
});

const summarize = (providers: string[], mode = 'exclusive') => ({
  type: 'summarize',
  input: { text: 'Settled jobs send nothing more. Their workflows end.' },
  providers,
  mode,
});

const resultOf = (workflowId: string) =>
  stack.temporal.workflow.getHandle(workflowId).result() as Promise<JobWorkflowResult>;

test('an operator cancel that lands while the first attempt is being created sends nothing, and the workflow closes', async () => {
  const barrier = await holdAttemptWrites(stack);
  let job;
  try {
    job = await createJob(stack, summarize(['chat']));
    // The workflow is admitting the job, held at attempt 1's INSERT: the API ends the row itself.
    await barrier.blocked('INSERT INTO attempts');
    const cancelled = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
      reason: 'customer withdrew',
    });
    expect(cancelled.status).toBe(200);
  } finally {
    await barrier.release();
  }
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
  await expect(resultOf(job.workflowId)).resolves.toMatchObject({ status: 'cancelled' });
  expect(requestsFor(stack, job.id, 'chat')).toEqual([]);
  const attempts = await attemptRows(stack.pool, job.id);
  expect(attempts.every((a) => a.state === 'cancelled')).toBe(true);
  expect((await readJob(stack, job.id)).status).toBe('cancelled');
});

test('a hedged job whose winner is recorded exactly when the hedge timer fires launches no second call, and the workflow closes', async () => {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hang' } });
  const job = await createJob(stack, summarize(['chat', 'chat-backup'], 'hedged'));
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running',
  );
  const barrier = await holdAttemptWrites(stack);
  try {
    // The hedge timer fires: the workflow starts attempt 2 and is held at its INSERT…
    await barrier.blocked('INSERT INTO attempts');
    // …while attempt 1's late answer wins the compare-and-swap (its nudge has not arrived).
    const won = await recordAttemptResultIn(barrier.client, {
      attemptId: `${job.id}:1`,
      result: { summary: 'Settled jobs send nothing more.' },
    });
    expect(won.outcome).toBe('won');
  } finally {
    await barrier.release();
  }
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
  await expect(resultOf(job.workflowId)).resolves.toEqual({
    jobId: job.id,
    status: 'succeeded',
    completedBy: `${job.id}:1`,
  });
  // Nothing was sent for attempt 2.
  expect(requestsFor(stack, job.id, 'chat').map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
  const attempts = await attemptRows(stack.pool, job.id);
  expect(attempts.map((a) => [a.seq, a.state])).toEqual(
    attempts.length === 1
      ? [[1, 'succeeded']]
      : [
          [1, 'succeeded'],
          [2, 'cancelled'],
        ],
  );
});

test('a cancel that arrives after another attempt already won is refused, and the workflow result and the row name the same winner', async () => {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hang' } });
  const job = await createJob(stack, summarize(['chat']));
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running',
  );
  // A late result wins in a transaction that stays open (it holds the job row)…
  const barrier = await holdTransaction(stack);
  let cancel: Promise<Response>;
  try {
    const won = await recordAttemptResultIn(barrier.client, {
      attemptId: `${job.id}:1`,
      result: { summary: 'Settled jobs send nothing more.' },
    });
    expect(won.outcome).toBe('won');
    // …while an operator's cancel passes every check and reaches the row, where it waits.
    cancel = operator(stack, 'POST', `/jobs/${job.id}/cancel`, { reason: 'too slow' });
    await barrier.blocked('UPDATE jobs SET terminal_status');
  } finally {
    await barrier.release();
  }
  const refused = await cancel;
  expect(refused.status).toBe(409);
  expect(await refused.json()).toMatchObject({ type: '/problems/job-terminal' });

  await expect(resultOf(job.workflowId)).resolves.toEqual({
    jobId: job.id,
    status: 'succeeded',
    completedBy: `${job.id}:1`,
  });
  const row = await readJob(stack, job.id);
  expect([row.status, row.completedBy]).toEqual(['succeeded', `${job.id}:1`]);
});
