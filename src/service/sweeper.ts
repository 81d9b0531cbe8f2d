import { findJobsAwaitingAdmission, type JobPageCursor } from '../db/jobs';
import type { Logger } from '../logger';
import { ensureJobWorkflow, type JobServiceDeps } from './jobs';

export interface SweepOptions {
  /** Leave jobs younger than this to the API request that is starting their workflow now. */
  olderThanMs: number;
  batchSize?: number;
}

/**
 * Starts the workflow of every open job whose workflow never ran: the API crashed between
 * the insert and the start, and the client did not retry. Starting is idempotent (an existing
 * workflow is reused, a closed one never restarted), so overlapping sweeps are harmless.
 * Returns how many jobs it ensured.
 */
export async function sweepJobsWithoutWorkflow(
  deps: Pick<JobServiceDeps, 'pool' | 'temporal' | 'taskQueue'>,
  options: SweepOptions,
  logger?: Logger,
): Promise<number> {
  const limit = options.batchSize ?? 100;
  let after: JobPageCursor | undefined;
  let ensured = 0;
  for (;;) {
    const jobs = await findJobsAwaitingAdmission(deps.pool, {
      olderThanMs: options.olderThanMs,
      limit,
      after,
    });
    for (const job of jobs) {
      await ensureJobWorkflow(deps, job);
      ensured += 1;
      logger?.info(
        { jobId: job.id, workflowId: job.workflowId },
        'sweeper ensured the workflow of a job that had none running',
      );
    }
    const last = jobs[jobs.length - 1];
    if (!last || jobs.length < limit) return ensured;
    after = { createdAtMicros: last.createdAtMicros, id: last.id };
  }
}
