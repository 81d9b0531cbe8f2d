/**
 * Cancels by query (issue 61): the open jobs a query finds, shown first (a dry run changes
 * nothing), then cancelled one by one through the single cancel path, at most a bound per run,
 * the run and each job's answer recorded. Running it again takes up what is left.
 */
import {
  openJobsMatching,
  recordBulkCancel,
  recordBulkCancelJob,
  type MatchedJob,
  type OpenJobQuery,
} from '../db/bulkCancels';
import { findJob } from '../db/jobs';
import { cancelJob, type AttemptServiceDeps } from './attempts';

export interface BulkCancelResult {
  runId: string | null;
  jobs: Array<MatchedJob & { result?: 'cancelled' | 'refused'; detail?: string }>;
  /** More open jobs match than this run's bound: run it again. */
  more: boolean;
  /**
   * With more to do, the last job this run took: a run `after` it passes over the ones this run
   * could not cancel (which stay open and would otherwise come first again).
   */
  next: string | null;
}

/** The open jobs the query finds, at most `limit`: what an applied run would cancel. */
export async function planBulkCancel(
  deps: Pick<AttemptServiceDeps, 'pool'>,
  query: OpenJobQuery,
  limit: number,
): Promise<{ jobs: MatchedJob[]; more: boolean }> {
  await refuseUnknownStart(deps, query);
  return openJobsMatching(deps.pool, query, limit);
}

/** `--after` must name a job: an unknown one would match nothing, as if none were left. */
async function refuseUnknownStart(
  deps: Pick<AttemptServiceDeps, 'pool'>,
  query: OpenJobQuery,
): Promise<void> {
  if (query.afterJobId && !(await findJob(deps.pool, query.afterJobId)))
    throw new Error(`no job ${query.afterJobId} to start after`);
}

/** Cancels what the query finds now (at most `limit`), recorded as one run. */
export async function applyBulkCancel(
  deps: AttemptServiceDeps,
  query: OpenJobQuery,
  limit: number,
  by: { operator: string; reason: string },
): Promise<BulkCancelResult> {
  await refuseUnknownStart(deps, query);
  const { jobs, more } = await openJobsMatching(deps.pool, query, limit);
  if (jobs.length === 0) return { runId: null, jobs: [], more, next: null };
  const runId = await recordBulkCancel(deps.pool, { ...by, query, matched: jobs.length });
  const done: BulkCancelResult['jobs'] = [];
  for (const job of jobs) {
    let answer: { result: 'cancelled' | 'refused'; detail: string };
    try {
      const status = await cancelJob(deps, job.id, {
        operator: by.operator,
        reason: `${by.reason} (bulk cancel ${runId})`,
      });
      answer = status
        ? { result: 'cancelled', detail: `job is ${status.status}` }
        : { result: 'refused', detail: 'no such job' };
    } catch (error) {
      // Ended meanwhile, say: the cancel's own refusal, and nothing changed.
      answer = { result: 'refused', detail: (error as Error).message };
    }
    await recordBulkCancelJob(deps.pool, { runId, jobId: job.id, ...answer });
    done.push({ ...job, ...answer });
  }
  return { runId, jobs: done, more, next: more ? (jobs.at(-1)?.id ?? null) : null };
}
