import type { JobStatus } from '../domain/job';
import { JOB_COLUMNS, jobColumnsOf, toJob, type JobRecord, type JobRow } from './jobs';
import type { Queryable } from './pool';

/** Where a page of jobs ends: the next page starts after this (created_at, id). */
export interface JobPageCursor {
  createdAtMicros: number;
  id: string;
}

// Not prepared: with `$n IS NULL OR …` conditions the best plan depends on the values, and a
// generic plan (which a prepared statement may settle on) scans an owner's whole history.
const OPEN_JOBS_SQL = `SELECT ${JOB_COLUMNS} FROM jobs j
    WHERE j.terminal_status IS NULL AND (j.admitted_at IS NOT NULL) = $5
      AND j.created_at <= now() - $1 * interval '1 millisecond'
      AND ($3::bigint IS NULL
           OR (j.created_at, j.id) > (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::uuid))
    ORDER BY j.created_at, j.id
    LIMIT $2`;

/**
 * Open jobs created more than `olderThanMs` ago, oldest first, in pages: those whose workflow
 * never ran (`admitted: false`, a lost start) or those it has admitted (`admitted: true`, whose
 * workflow must still be running). The sweeper heals both kinds.
 */
export async function findOpenJobs(
  db: Queryable,
  options: { admitted: boolean; olderThanMs: number; limit: number; after?: JobPageCursor },
): Promise<JobRecord[]> {
  const { rows } = await db.query<JobRow>(OPEN_JOBS_SQL, [
    options.olderThanMs,
    options.limit,
    options.after?.createdAtMicros ?? null,
    options.after?.id ?? null,
    options.admitted,
  ]);
  return rows.map(toJob);
}

// Not prepared either, for the same reason.
const OWNED_PAGE_SQL = `SELECT ${jobColumnsOf('page')} FROM (
     SELECT ${JOB_COLUMNS} FROM jobs j
      WHERE j.owner_id = $1
        AND ($2::bigint IS NULL
             OR (j.created_at, j.id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
   ) page
   WHERE $4::text IS NULL OR page.status = $4::text
   ORDER BY page.created_at DESC, page.id DESC
   LIMIT $5`;

/** One page of an owner's jobs, newest first, optionally of one status. */
export async function listOwnedJobs(
  db: Queryable,
  ownerId: string,
  options: { status?: JobStatus; after?: JobPageCursor; limit: number },
): Promise<{ jobs: JobRecord[]; next?: JobPageCursor }> {
  const { rows } = await db.query<JobRow>(OWNED_PAGE_SQL, [
    ownerId,
    options.after?.createdAtMicros ?? null,
    options.after?.id ?? null,
    options.status ?? null,
    options.limit + 1,
  ]);
  const jobs = rows.slice(0, options.limit).map(toJob);
  const last = jobs[jobs.length - 1];
  return rows.length > options.limit && last
    ? { jobs, next: { createdAtMicros: last.createdAtMicros, id: last.id } }
    : { jobs };
}

/** Jobs of every owner (for operators), newest first, optionally of one owner or status. */
export async function listJobsForOperators(
  db: Queryable,
  options: { ownerId?: string; status?: JobStatus; limit: number },
): Promise<JobRecord[]> {
  const { rows } = await db.query<JobRow>(
    `SELECT ${jobColumnsOf('page')}
       FROM (SELECT ${JOB_COLUMNS} FROM jobs j WHERE $1::text IS NULL OR j.owner_id = $1) page
      WHERE $2::text IS NULL OR page.status = $2
      ORDER BY page.created_at DESC, page.id DESC
      LIMIT $3`,
    [options.ownerId ?? null, options.status ?? null, options.limit],
  );
  return rows.map(toJob);
}
