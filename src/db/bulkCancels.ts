/**
 * Cancels by query (migration 0032): the open jobs a query finds, and the kept record of each
 * applied run.
 */
import type { JobStatus } from '../domain/job';
import { JOB_STATUS_OF_J } from './jobColumns';
import type { Queryable } from './pool';

/** What an operator's query selects among open jobs; every part is optional. */
export interface OpenJobQuery {
  ownerId?: string;
  /** Jobs whose plan names this provider. */
  provider?: string;
  status?: JobStatus;
  createdAfter?: Date;
  createdBefore?: Date;
  /**
   * Only jobs after this one in the run's order (created, then id): where an earlier run left
   * off, so that jobs it could not cancel (their workflow paused, say) are passed over.
   */
  afterJobId?: string;
}

export interface MatchedJob {
  id: string;
  ownerId: string;
  type: string;
  status: JobStatus;
  createdAt: Date;
}

/**
 * The open jobs the query finds, oldest first, at most `limit`; and whether more are left.
 * Not prepared: its `$n IS NULL OR …` conditions want a plan for their values.
 */
export async function openJobsMatching(
  db: Queryable,
  query: OpenJobQuery,
  limit: number,
): Promise<{ jobs: MatchedJob[]; more: boolean }> {
  const { rows } = await db.query<{
    id: string;
    owner_id: string;
    job_type: string;
    status: JobStatus;
    created_at: Date;
  }>(
    `SELECT id, owner_id, job_type, status, created_at FROM (
       SELECT j.id, j.owner_id, j.job_type, j.created_at, ${JOB_STATUS_OF_J} AS status
         FROM jobs j
        WHERE j.terminal_status IS NULL
          AND ($1::text IS NULL OR j.owner_id = $1)
          AND ($2::text IS NULL OR $2 = ANY (j.provider_plan))
          AND ($4::timestamptz IS NULL OR j.created_at >= $4)
          AND ($5::timestamptz IS NULL OR j.created_at < $5)
          AND ($7::uuid IS NULL
               OR (j.created_at, j.id) > (SELECT a.created_at, a.id FROM jobs a WHERE a.id = $7))) open
      WHERE $3::text IS NULL OR status = $3
      ORDER BY created_at, id
      LIMIT $6`,
    [
      query.ownerId ?? null,
      query.provider ?? null,
      query.status ?? null,
      query.createdAfter ?? null,
      query.createdBefore ?? null,
      limit + 1,
      query.afterJobId ?? null,
    ],
  );
  return {
    jobs: rows.slice(0, limit).map((row) => ({
      id: row.id,
      ownerId: row.owner_id,
      type: row.job_type,
      status: row.status,
      createdAt: row.created_at,
    })),
    more: rows.length > limit,
  };
}

/** Records an applied run before it cancels anything. */
export async function recordBulkCancel(
  db: Queryable,
  run: { operator: string; reason: string; query: OpenJobQuery; matched: number },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO bulk_cancels (operator, reason, query, matched) VALUES ($1, $2, $3, $4)
     RETURNING id::text`,
    [run.operator, run.reason, JSON.stringify(run.query), run.matched],
  );
  return rows[0]!.id;
}

/** What the cancel answered for one job of an applied run. */
export async function recordBulkCancelJob(
  db: Queryable,
  row: { runId: string; jobId: string; result: 'cancelled' | 'refused'; detail: string },
): Promise<void> {
  await db.query(
    `INSERT INTO bulk_cancel_jobs (bulk_cancel_id, job_id, result, detail) VALUES ($1, $2, $3, $4)`,
    [row.runId, row.jobId, row.result, row.detail],
  );
}
