/** How the service reaches a job's workflow with an update, and reads what comes back. */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, type UpdateDefinition } from '@temporalio/common';
import type { JobRecord } from '../db/jobs';
import { causeChain } from '../domain/causeChain';
import { FAILURES, failureDetails, problemOfFailure } from '../domain/failures';
import type { Logger } from '../logger';
import { endedJobMessage } from '../workflows/policy';
import {
  isRunClosedMidUpdate,
  isWorkflowPaused,
  isWorkflowTaskFailing,
  ServiceError,
} from './errors';

/** What sending an update takes. */
interface UpdateDeps {
  temporal: Client;
  logger: Logger;
}

/** The job's workflow has closed, so no update can reach it. */
export class WorkflowClosedError extends ServiceError {
  constructor(job: JobRecord) {
    super(
      'job-terminal',
      job.terminalStatus ? endedJobMessage(job.id, job.terminalStatus) : `job ${job.id} has ended`,
    );
    this.name = 'WorkflowClosedError';
  }
}

/** A cancellation anywhere down the causes (an activity cancelled with its workflow, say). */
function causedByCancellation(error: Error): boolean {
  for (const cause of causeChain(error.cause)) if (cause instanceof CancelledFailure) return true;
  return false;
}

/** Turns a refused or failed workflow update into the rule it broke. */
function asServiceError(error: unknown, job: JobRecord): unknown {
  // Paused by an operator through Temporal: nothing was taken in, and nothing will be until the
  // workflow is unpaused. Said so, with the way out, rather than answered as a failure of ours.
  if (isWorkflowPaused(error))
    return new ServiceError(
      'workflow-paused',
      `the workflow of job ${job.id} is paused in Temporal, which takes no update while paused: nothing was done; unpause it (\`onejob jobs unpause ${job.id} --reason …\`, or the tool that paused it) and send the request again`,
      { jobId: job.id, workflowId: job.workflowId },
    );
  // The run closed while it held the update (reset or terminated): no rule was broken.
  if (isRunClosedMidUpdate(error)) return new WorkflowClosedError(job);
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const cause = error.cause;
    const problem = problemOfFailure(cause.type);
    // An in-flight refusal names the attempt that blocks; other refusals carry their facts.
    const blocking = failureDetails(cause, 'attemptInFlight');
    const extensions =
      cause.type === FAILURES.attemptInFlight
        ? blocking && { blockingAttempt: blocking }
        : (cause.details?.[0] as Record<string, unknown> | undefined);
    return new ServiceError(problem, cause.message, extensions ?? {});
  }
  // The workflow was cancelled (from the Web UI or the CLI, say) while the update ran: it ends.
  if (error instanceof WorkflowUpdateFailedError && causedByCancellation(error))
    return new WorkflowClosedError(job);
  // The workflow has closed: the job ended.
  const name = (error as Error)?.name;
  if (
    name === 'WorkflowNotFoundError' ||
    /already completed|not found/i.test((error as Error)?.message ?? '')
  ) {
    return new WorkflowClosedError(job);
  }
  return error;
}

/**
 * How long an update waits for a workflow whose task keeps failing (Temporal turns updates away
 * then): two workflow task timeouts (Temporal's 10 s, which the job workflows keep). The update
 * may meet the failed state just as a retried task starts, and that retry may time out too when
 * the engine is slow: a fault campaign with no fault at all saw a task time out twice in a row
 * on the dev server's stalled persistence, and a try-again answered 503 a second before it.
 */
const FAILING_TASK_PATIENCE_MS = 20_000;

/**
 * Sends an update to the job's workflow; a refusal comes back as the rule it broke. An update
 * Temporal turned away unseen, while the workflow's task fails, is sent again until it is let
 * in or the patience runs out (then the caller gets 503 and Retry-After: nothing happened).
 */
export async function updateJobWorkflow<Ret, Arg>(
  deps: UpdateDeps,
  job: JobRecord,
  update: UpdateDefinition<Ret, [Arg]>,
  arg: Arg,
): Promise<Ret> {
  const giveUpAt = Date.now() + FAILING_TASK_PATIENCE_MS;
  for (let pause = 250; ; pause = Math.min(pause * 2, 2_000)) {
    try {
      return await deps.temporal.workflow
        .getHandle(job.workflowId)
        .executeUpdate(update, { args: [arg] });
    } catch (error) {
      // Sent again: a task that failed took nothing in, and a run reset while it held the
      // update left it to the new run (which continues from the reset point, without it).
      const again = isWorkflowTaskFailing(error) || isRunClosedMidUpdate(error);
      if (!again || Date.now() + pause > giveUpAt) throw asServiceError(error, job);
      deps.logger.warn(
        { jobId: job.id, workflowId: job.workflowId, update: update.name },
        isRunClosedMidUpdate(error)
          ? "the job's workflow run closed while it held the update (a reset?); sending it again"
          : "the job's workflow task is failing; sending the update again",
      );
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
