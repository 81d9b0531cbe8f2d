import { DEFAULTS } from '../domain/defaults';
import type { JobStatus } from '../domain/job';
import { JOB_COLUMNS, jobColumnsOf, toJob, type JobRecord, type JobRow } from './jobColumns';
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

const PAGE_COLUMNS = jobColumnsOf('page');
// A list item without its input and result (the default): they stay in the table, unread.
const PAGE_COLUMNS_WITHOUT_BODIES = PAGE_COLUMNS.replace(
  'page.input,',
  `'{}'::jsonb AS input,`,
).replace('page.result,', 'NULL::jsonb AS result,');
if (
  PAGE_COLUMNS_WITHOUT_BODIES.includes('page.input') ||
  PAGE_COLUMNS_WITHOUT_BODIES.includes('page.result')
)
  throw new Error('the list page still selects input or result');

// Not prepared either, for the same reason.
// The owner's jobs after the cursor, newest first, at most `bound` of them (a parameter: the
// scan's bound, so that a status rare among many jobs is looked for in that many, not in the
// owner's whole history).
const ownedScan = (bound: string): string => `SELECT ${JOB_COLUMNS} FROM jobs j
      WHERE j.owner_id = $1
        AND ($2::bigint IS NULL
             OR (j.created_at, j.id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
      ORDER BY j.created_at DESC, j.id DESC
      LIMIT ${bound}`;
const ownedPageSql = (columns: string): string => `SELECT ${columns} FROM (${ownedScan('$6')}) page
   WHERE $4::text IS NULL OR page.status = $4::text
   ORDER BY page.created_at DESC, page.id DESC
   LIMIT $5`;

// Where a page of one status stopped looking when its scan found too few: the oldest job scanned,
// and how many were.
const SCAN_EDGE_SQL = `SELECT scanned.created_at_us, scanned.id, count(*) OVER () AS scanned
     FROM (${ownedScan('$4')}) scanned
    ORDER BY scanned.created_at ASC, scanned.id ASC
    LIMIT 1`;
const OWNED_PAGE_SQL = ownedPageSql(PAGE_COLUMNS);
const OWNED_PAGE_WITHOUT_BODIES_SQL = ownedPageSql(PAGE_COLUMNS_WITHOUT_BODIES);

// With bodies and a byte bound, the page's rows stop once the bodies before them, as stored,
// reach $6: pg_column_size reads a TOASTed value's size without reading the value, so a page of
// large inputs is not fetched whole to send a few. `window_rows` counts the rows before that cut.
const OWNED_PAGE_WITH_BOUNDED_BODIES_SQL = `SELECT ${jobColumnsOf('cut')}, cut.window_rows FROM (
     SELECT capped.*, count(*) OVER () AS window_rows,
            coalesce(sum(capped.body_bytes) OVER (ORDER BY capped.created_at DESC, capped.id DESC
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bytes_before
       FROM (SELECT page.*, pg_column_size(page.input) + coalesce(pg_column_size(page.result), 0)
                    AS body_bytes
               FROM (${OWNED_PAGE_SQL}) page) capped
   ) cut
   WHERE cut.bytes_before < $7
   ORDER BY cut.created_at DESC, cut.id DESC`;

/** Which page of an owner's jobs: see listOwnedJobs. */
export interface OwnedPageOptions {
  status?: JobStatus;
  after?: JobPageCursor;
  limit: number;
  withBodies?: boolean;
  maxStoredBytes?: number;
  /** Of one status, a page looks at this many of the owner's jobs at most (DEFAULTS). */
  statusScanRows?: number;
}

/**
 * One page of an owner's jobs, newest first, optionally of one status. Without `withBodies` the
 * jobs' input is `{}` and their result null: not read at all. With `maxStoredBytes` the page
 * ends early, after the job whose input and result (as PostgreSQL stores them, compressed)
 * take the page's past that bound; it always holds one job, and `next` continues after it.
 */
export async function listOwnedJobs(
  db: Queryable,
  ownerId: string,
  options: OwnedPageOptions,
): Promise<{ jobs: JobRecord[]; next?: JobPageCursor }> {
  const bounded = options.withBodies !== false && options.maxStoredBytes !== undefined;
  const sql = bounded
    ? OWNED_PAGE_WITH_BOUNDED_BODIES_SQL
    : options.withBodies === false
      ? OWNED_PAGE_WITHOUT_BODIES_SQL
      : OWNED_PAGE_SQL;
  // Without a status every job scanned is on the page; with one, the scan has its own bound.
  const scanRows = options.status
    ? Math.max(options.limit + 1, options.statusScanRows ?? DEFAULTS.listStatusScanRows)
    : options.limit + 1;
  const cursor = [ownerId, options.after?.createdAtMicros ?? null, options.after?.id ?? null];
  const { rows } = await db.query<JobRow & { window_rows?: string }>(sql, [
    ...cursor,
    options.status ?? null,
    options.limit + 1,
    scanRows,
    ...(bounded ? [options.maxStoredBytes] : []),
  ]);
  const jobs = rows.slice(0, options.limit).map(toJob);
  const last = jobs[jobs.length - 1];
  // Rows left out by the byte bound, or the one past the limit: either way, more follow.
  const cut = rows[0]?.window_rows !== undefined && Number(rows[0].window_rows) > rows.length;
  if ((cut || rows.length > options.limit) && last)
    return { jobs, next: { createdAtMicros: last.createdAtMicros, id: last.id } };
  if (!options.status) return { jobs };
  // Too few of the status in the scan: if it was cut at its bound, the next page looks on from
  // the oldest job scanned (a page of one status may so hold fewer jobs than asked, even none).
  const { rows: edge } = await db.query<{ created_at_us: number; id: string; scanned: string }>(
    SCAN_EDGE_SQL,
    [...cursor, scanRows],
  );
  const oldest = edge[0];
  return oldest && Number(oldest.scanned) >= scanRows
    ? { jobs, next: { createdAtMicros: oldest.created_at_us, id: oldest.id } }
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
