import { ATTEMPT_COLUMNS, toAttempt, type AttemptRecord, type AttemptRow } from './attempts';
import { JOB_COLUMNS, toJob, type JobRecord, type JobRow } from './jobColumns';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

const ATTEMPT_PREFIX = 'attempt_';

// One row per attempt (one row with NULL attempt columns for a job without any), so that the job
// and its attempts come from one snapshot in one round trip.
const FIND_OWNED_JOB_WITH_ATTEMPTS = preparedStatement(
  'jobs.find-owned-with-attempts',
  `SELECT ${JOB_COLUMNS},
          ${ATTEMPT_COLUMNS.map((column) => `a.${column} AS ${ATTEMPT_PREFIX}${column}`).join(', ')}
     FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id
    WHERE j.id = $1 AND j.owner_id = $2
    ORDER BY a.seq`,
);

/** A job by id with its attempts in order, visible only to its owner (see findOwnedJob). */
export async function findOwnedJobWithAttempts(
  db: Queryable,
  ownerId: string,
  jobId: string,
): Promise<{ job: JobRecord; attempts: AttemptRecord[] } | undefined> {
  const { rows } = await db.query<JobRow & Record<string, unknown>>(
    FIND_OWNED_JOB_WITH_ATTEMPTS([jobId, ownerId]),
  );
  const first = rows[0];
  if (!first) return undefined;
  const attempts = rows
    .filter((row) => row[`${ATTEMPT_PREFIX}id`] !== null)
    .map((row) =>
      toAttempt(
        Object.fromEntries(
          ATTEMPT_COLUMNS.map((column) => [column, row[`${ATTEMPT_PREFIX}${column}`]]),
        ) as unknown as AttemptRow,
      ),
    );
  return { job: toJob(first), attempts };
}
