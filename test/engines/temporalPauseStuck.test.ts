import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { sweepJobs } from '../../src/service/sweeper';
import { attemptSettledSignal } from '../../src/workflows/definitions';
import { chargeBody, createJob, operator, readJob, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { effectsFor } from '../support/providerLedger';
import { payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { useTestStack } from '../support/stack';
import { setWorkflowPaused } from '../support/temporal';

/**
 * A pause that lands while a workflow task waits for a worker (the workers are down, or behind)
 * makes Temporal fail that task with the pause; the TypeScript SDK (1.24, the newest) cannot
 * replay that history, so once unpaused the run's task fails at every try and the run is stuck.
 * The sweeper ends such a run and continues the job in a new one, as after a terminate. On the
 * production engine only: the dev server has no pause.
 */
const stack = useTestStack({
  workerProcess: true,
  providers: (url) => [
    // Its late-result window short: an operator's "failed" applies once no answer can come.
    payProvider(url, 'pay', {
      timeoutMs: TIMES_OUT_SOON_MS,
      lateResultTimeoutMs: 1_500,
      notFoundGraceMs: 200,
    }),
    payProvider(url, 'pay-backup'),
  ],
  certify: [['pay-backup', 'charge']],
});

const call = (action: 'pause' | 'unpause', workflowId: string) =>
  setWorkflowPaused(stack, action, workflowId, `operator ${action}`);

/**
 * Waits until the run's workflow task is scheduled and not started, the state a pause fails.
 * The killed worker's long polls may still be held by Temporal's matching for a moment and take
 * the task (it is then started, and times out later, scheduled again): the pause waits for that.
 */
const untilTaskWaits = (handle: WorkflowHandle) =>
  eventually(
    () => handle.describe(),
    (described) =>
      described.raw.pendingWorkflowTask?.state ===
      temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED,
    60_000,
  );

/**
 * Leaves the job's run stuck after a pause: with no worker, a signal leaves a workflow task
 * scheduled and not started, and the pause fails it; once the worker is back it cannot replay
 * that, and the task fails at every try.
 */
async function leaveStuckAfterPause(handle: WorkflowHandle, jobId: string): Promise<void> {
  await stack.killWorker('SIGKILL');
  await handle.signal(attemptSettledSignal, { attemptId: `${jobId}:1` });
  await untilTaskWaits(handle);
  await call('pause', handle.workflowId);
  await call('unpause', handle.workflowId);
  const history = await handle.fetchHistory();
  expect(
    (history.events ?? []).some((e) => e.workflowTaskFailedEventAttributes?.cause === 39),
  ).toBe(true);
  await stack.restartWorker();
  await eventually(
    () => handle.describe(),
    (described) => (described.raw.pendingWorkflowTask?.attempt ?? 0) >= 2,
  );
}

const sweep = () =>
  sweepJobs(
    { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
    { olderThanMs: 0 },
  );

test('a run paused while its workflow task waited for a worker, stuck since, is ended by the sweeper and the job goes on in a new run, charged once', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  const handle = stack.temporal.workflow.getHandle(job.workflowId);
  const stuckRun = (await handle.describe()).runId;

  await leaveStuckAfterPause(handle, job.id);

  const report = await sweep();
  expect(report).toMatchObject({ restarted: 1, failed: 0 });
  const described = await handle.describe();
  expect(described.status.name).toBe('RUNNING');
  expect(described.runId).not.toBe(stuckRun);
  expect((await readJob(stack, job.id)).notes).toContainEqual(
    expect.objectContaining({
      event: 'workflow_restarted',
      closedRun: stuckRun,
      closedAs: 'TERMINATED',
      reason: expect.stringMatching(/paused while a workflow task waited/),
    }),
  );

  // The new run knows the unknown attempt; the operator's verdict settles the job.
  const resolved = await eventually(
    () =>
      operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, {
        outcome: 'failed',
        reason: 'bank confirms no charge',
      }),
    (response) => response.status !== 503,
  );
  expect(resolved.status).toBe(200);
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:2`);
  expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:2`]);
});

test('a run a pause left stuck whose job then ended outside it (the reconciler found the charge) is ended by the sweeper, and nothing is run again', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'stuck-then-ended' } });
  const job = await createJob(stack, chargeBody(['pay']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  const handle = stack.temporal.workflow.getHandle(job.workflowId);
  const stuckRun = (await handle.describe()).runId;
  await leaveStuckAfterPause(handle, job.id);
  // The charge goes through now; the workers' reconciler finds it and the job ends, in the
  // database only: its run cannot take the news.
  stack.simulator.openGate('stuck-then-ended');
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect((await handle.describe()).status.name).toBe('RUNNING');

  const report = await sweep();
  expect(report).toMatchObject({ endedStuck: 1, restarted: 0, failed: 0 });
  const described = await handle.describe();
  expect([described.runId, described.status.name]).toEqual([stuckRun, 'TERMINATED']);
  expect((await readJob(stack, job.id)).status).toBe('succeeded');
  expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:1`]);
});
