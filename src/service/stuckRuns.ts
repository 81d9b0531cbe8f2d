/**
 * Runs a workflow pause left stuck: paused while a workflow task waited for a worker, a history
 * the TypeScript SDK (1.24) cannot replay, so the run's task fails at every try. The sweeper ends
 * them: under an open job it continues the job in a new run (sweeper.ts); under an ended job
 * there is nothing left to continue.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { endedJobsOfWorkflows } from '../db/endedJobs';
import type { Logger } from '../logger';
import { JOB_WORKFLOW_TYPE } from '../workflows/definitions';
import type { JobServiceDeps } from './jobs';

type SweepDeps = Pick<JobServiceDeps, 'pool' | 'temporal' | 'taskQueue'>;

/**
 * The status of the latest run of a job's workflow, or `MISSING` if the server has none; with
 * the attempt of its workflow task, when one is pending (above 1: it has failed and is retried).
 */
export async function latestRunStatus(
  deps: SweepDeps,
  workflowId: string,
): Promise<{ name: string; runId?: string; taskAttempt?: number }> {
  try {
    const description = await deps.temporal.workflow.getHandle(workflowId).describe();
    return {
      name: description.status.name,
      runId: description.runId,
      taskAttempt: description.raw.pendingWorkflowTask?.attempt ?? undefined,
    };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { name: 'MISSING' };
    throw error;
  }
}

/** Why the sweeper ends a run that a pause left stuck (its note, its log line, the terminate). */
export const STUCK_AFTER_PAUSE =
  'its run was paused while a workflow task waited for a worker, and its task has failed at every try since (the TypeScript SDK cannot replay the task Temporal failed for the pause): the sweeper ended the run and continues the job in a new one';

/** The cause Temporal (1.30+) gives a workflow task it failed because the run was paused. */
const PAUSED_BEFORE_TASK_STARTED = 39;

/**
 * Whether a running run is stuck for good after a pause: paused while a workflow task was
 * scheduled and not yet started, Temporal failed that task with the pause, a history that the
 * SDK's workflow machines (1.24) refuse to replay ("WorkflowTaskMachine in state Scheduled says
 * the transition is invalid"), so every task fails since. Only a run whose pending task has
 * failed is read further, so a healthy job costs no history read.
 */
export async function stuckAfterPause(
  deps: SweepDeps,
  workflowId: string,
  run: { name: string; runId?: string; taskAttempt?: number },
): Promise<boolean> {
  if (run.name !== 'RUNNING' || (run.taskAttempt ?? 0) < 2) return false;
  const history = await deps.temporal.workflow.getHandle(workflowId, run.runId).fetchHistory();
  return (history.events ?? []).some(
    (event) => event.workflowTaskFailedEventAttributes?.cause === PAUSED_BEFORE_TASK_STARTED,
  );
}

/** Running job workflows looked up in the database at once. */
const RUNS_PER_LOOKUP = 100;

/**
 * A run a pause left stuck whose job has ended meanwhile (its answer settled outside the
 * workflow: the reconciler's look, a callback, a late answer): its task fails at every try and
 * nothing is left for it to do, so it is ended. What an ending hands over is the backstop's
 * (webhook events) and reconcileAttemptsOfEndedJobs' (attempts still unknown). Found among the
 * running job workflows, those whose job row has ended; only those are described.
 */
export async function endStuckRunsOfEndedJobs(deps: SweepDeps, logger?: Logger): Promise<number> {
  let ended = 0;
  const endStuck = async (workflowIds: string[]): Promise<void> => {
    for (const job of await endedJobsOfWorkflows(deps.pool, workflowIds)) {
      const run = await latestRunStatus(deps, job.workflowId);
      if (!(await stuckAfterPause(deps, job.workflowId, run))) continue;
      await deps.temporal.workflow
        .getHandle(job.workflowId, run.runId)
        .terminate(STUCK_AFTER_PAUSE_ENDED);
      logger?.warn({ jobId: job.id, workflowId: job.workflowId }, STUCK_AFTER_PAUSE_ENDED);
      ended += 1;
    }
  };
  let batch: string[] = [];
  for await (const run of deps.temporal.workflow.list({
    query: `WorkflowType = '${JOB_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
  })) {
    batch.push(run.workflowId);
    if (batch.length < RUNS_PER_LOOKUP) continue;
    await endStuck(batch);
    batch = [];
  }
  if (batch.length > 0) await endStuck(batch);
  return ended;
}

const STUCK_AFTER_PAUSE_ENDED =
  'its run was paused while a workflow task waited for a worker, its task has failed at every try since, and its job has ended meanwhile: the sweeper ended the run';
