import type { TerminalJobStatus } from '../domain/job';
import { findJob, type JobRecord } from './jobs';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/**
 * A job's end, told only to the statement that made it end (the compare-and-swap that won, or
 * the finish without a result that found it open): what its duration histogram observes, once.
 */
export interface EndedJob {
  type: string;
  status: TerminalJobStatus;
  /** From its creation to its end, by the database's clock. */
  seconds: number;
}

/** What a statement that ends a job returns about it (see EndedJob). */
export const ENDED_JOB_COLUMNS = `job_type, terminal_status,
  extract(epoch FROM finished_at - created_at)::float8 AS ended_after_seconds`;

export interface EndedJobRow {
  job_type: string;
  terminal_status: TerminalJobStatus;
  ended_after_seconds: number;
}

export function toEndedJob(row: EndedJobRow): EndedJob {
  return { type: row.job_type, status: row.terminal_status, seconds: row.ended_after_seconds };
}
const FINISH_JOB_WITHOUT_RESULT = preparedStatement(
  'jobs.finish-without-result',
  `UPDATE jobs SET terminal_status = $2, failure = $3, version = version + 1,
                   finished_at = now(), updated_at = now()
    WHERE id = $1 AND terminal_status IS NULL
   RETURNING ${ENDED_JOB_COLUMNS}`,
);

// The same end, refused while any attempt of the job may still take effect.
const FINISH_JOB_WITH_NOTHING_IN_FLIGHT = preparedStatement(
  'jobs.finish-with-nothing-in-flight',
  `UPDATE jobs SET terminal_status = $2, failure = $3, version = version + 1,
                   finished_at = now(), updated_at = now()
    WHERE id = $1 AND terminal_status IS NULL
      AND NOT EXISTS (SELECT 1 FROM attempts a
                       WHERE a.job_id = $1 AND a.state IN ('starting', 'running', 'unknown'))
   RETURNING ${ENDED_JOB_COLUMNS}`,
);

/**
 * Ends a job without a result. Moves the version, so any attempt that read the old one
 * loses its compare-and-swap, and an attempt still `starting` can no longer send anything
 * (beginProviderCall checks the job under a lock). Idempotent: a job already terminal is left
 * as it is.
 */
export async function finishJobWithoutResult(
  db: Queryable,
  jobId: string,
  status: Exclude<TerminalJobStatus, 'succeeded'>,
  failure: Record<string, unknown>,
  /** Only while no attempt of the job is in flight (starting, running, unknown). */
  nothingInFlight = false,
): Promise<{ job: JobRecord; ended?: EndedJob }> {
  const finish = nothingInFlight ? FINISH_JOB_WITH_NOTHING_IN_FLIGHT : FINISH_JOB_WITHOUT_RESULT;
  const { rows } = await db.query<EndedJobRow>(finish([jobId, status, JSON.stringify(failure)]));
  const job = await findJob(db, jobId);
  if (!job) throw new Error(`job ${jobId} does not exist`);
  return rows[0] ? { job, ended: toEndedJob(rows[0]) } : { job };
}

const ENDED_OF_WORKFLOWS = preparedStatement(
  'jobs.ended-of-workflows',
  'SELECT id, workflow_id FROM jobs WHERE workflow_id = ANY($1::text[]) AND terminal_status IS NOT NULL',
);

/** Of these workflow ids, those whose job has ended, with the job's id. */
export async function endedJobsOfWorkflows(
  db: Queryable,
  workflowIds: string[],
): Promise<Array<{ id: string; workflowId: string }>> {
  const { rows } = await db.query<{ id: string; workflow_id: string }>(
    ENDED_OF_WORKFLOWS([workflowIds]),
  );
  return rows.map((row) => ({ id: row.id, workflowId: row.workflow_id }));
}
