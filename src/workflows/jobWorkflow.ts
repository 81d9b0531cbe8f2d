import { allHandlersFinished, condition, isCancellation } from '@temporalio/workflow';
import { markdownText } from '../domain/displayText';
import type { TerminalJobStatus } from '../domain/job';
import { nonCancellable } from './activityStubs';
import { admit } from './admit';
import { announceEnding } from './announcements';
import type { JobPlan, JobWorkflowInput, JobWorkflowResult } from './definitions';
import { runExclusive } from './exclusiveLoop';
import { installHandlers } from './handlers';
import { runHedged } from './hedgedLoop';
import { JobRun } from './jobRun';
import { ANNOUNCE_FOUND_ENDING, RESUME_PLANNED_RETRY } from './patches';
import { exhaustedFailure } from './policy';
import { TEMPORAL_CANCEL } from './refusals';
import { resumedRetry, type PlannedRetry } from './retryPolicy';

/**
 * One job, one workflow: admit the job, run its attempts (one at a time, or hedged), wait out
 * unknown ones, and end with the job row. What the run knows is a JobRun; what it answers from
 * outside is in handlers.ts; what it decides is in policy.ts and retryPolicy.ts; the attempt
 * loops are exclusiveLoop.ts and hedgedLoop.ts.
 */
export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const job = new JobRun(input);
  installHandlers(job);
  const admitted = await admit(job);
  job.admit(admitted);
  try {
    return await runJob(job, admitted);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return await endCancelled(job, admitted, error);
  }
}

/** The job's attempts, from where admission (or the run before) left it, to its ending. */
async function runJob(job: JobRun, admitted: JobPlan): Promise<JobWorkflowResult> {
  const carried = job.input.carried;
  if (admitted.terminalStatus) {
    job.end({ status: admitted.terminalStatus, completedBy: admitted.completedBy });
    job.show(admitted.terminalStatus, `job already ${admitted.terminalStatus}`);
    // Ended with no workflow to hand its events over (a cancel, a late answer after a
    // terminate): this run does, at once (the sender already running makes it a no-op).
    if (job.patched(ANNOUNCE_FOUND_ENDING)) await announceEnding(job, admitted.jobId);
    return { jobId: admitted.jobId, status: admitted.terminalStatus, completedBy: job.winner };
  }
  let resumed: (PlannedRetry & { noted?: true }) | undefined;
  if (!carried && admitted.attempts.length > 0) {
    // A new run of a job whose earlier run ended: go on after the attempts it made, retrying
    // the last as that run would have (at the time it planned, if it noted one).
    job.resumeAfter(admitted.attempts, admitted);
    if (admitted.lastFailure && job.patched(RESUME_PLANNED_RETRY))
      resumed = resumedRetry(
        admitted,
        job.attempts,
        admitted.lastFailure,
        Math.random,
        Date.now(),
        job.retryRules,
      );
  }
  const blocked = job.attempts.find((a) => a.state === 'unknown');
  job.show(
    blocked ? 'unknown' : job.attempts.length > 0 ? 'running' : 'pending',
    carried?.waitingOn ?? 'admitted',
    carried?.needsOperator ?? false,
    // What the last run waited on may quote a provider.
    carried?.waitingOn === undefined ? 'admitted' : markdownText(carried.waitingOn),
  );
  if (admitted.mode === 'exclusive') await runExclusive(job, admitted, resumed);
  else await runHedged(job, admitted);

  if (!job.terminal) {
    job.end(
      await nonCancellable(() =>
        job.db.failJob({
          jobId: admitted.jobId,
          failure: exhaustedFailure(admitted, job.failures),
        }),
      ),
    );
  }
  const final: TerminalJobStatus = job.terminal ?? 'failed';
  if (job.status.status !== final)
    job.show(final, final === 'succeeded' ? `done: ${job.winner} won` : `done: ${final}`);
  await announceEnding(job, admitted.jobId);
  await condition(allHandlersFinished);
  return { jobId: admitted.jobId, status: final, completedBy: job.winner };
}

/** Cancelled through Temporal: an operator's cancel. The job row must end with the workflow. */
function endCancelled(
  job: JobRun,
  admitted: JobPlan,
  cancellation: unknown,
): Promise<JobWorkflowResult> {
  // Returned, not awaited: the workflow's own `return await` is the one wait, as it always was.
  return nonCancellable(async () => {
    for (const scope of job.runningCalls.values()) scope.cancel();
    await Promise.allSettled([...job.runningAttempts]);
    if (!job.terminal)
      job.end(await job.db.cancelJob({ jobId: admitted.jobId, ...TEMPORAL_CANCEL }));
    const final: TerminalJobStatus = job.terminal ?? 'cancelled';
    job.show(
      final,
      final === 'cancelled'
        ? `done: cancelled by ${TEMPORAL_CANCEL.operator} (${TEMPORAL_CANCEL.reason})`
        : `done: ${final} before the cancel arrived`,
    );
    await announceEnding(job, admitted.jobId);
    await condition(allHandlersFinished);
    if (final === 'cancelled') throw cancellation;
    return { jobId: admitted.jobId, status: final, completedBy: job.winner };
  });
}
