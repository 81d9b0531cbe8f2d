import type { Queryable } from './pool';
import { preparedStatement } from './statements';

const CLAIM_START_LEASE = preparedStatement(
  'jobs.claim-start-lease',
  `UPDATE jobs SET start_lease_until = now() + $2::int * interval '1 millisecond'
    WHERE id = $1 AND admitted_at IS NULL AND terminal_status IS NULL
      AND (start_lease_until IS NULL OR start_lease_until <= now())
    RETURNING id`,
);

/**
 * Takes the lease on starting a job's workflow when nobody holds it: its creator crashed
 * between the insert and the start, or gave the lease back. True for the one caller that took
 * it, who then starts the workflow; false while another holds it (its duplicate is answered
 * from the row) or once the workflow has admitted the job.
 */
export async function claimStartLease(
  db: Queryable,
  jobId: string,
  leaseMs: number,
): Promise<boolean> {
  return (await db.query(CLAIM_START_LEASE([jobId, leaseMs]))).rowCount === 1;
}

const GIVE_BACK_START_LEASE = preparedStatement(
  'jobs.give-back-start-lease',
  'UPDATE jobs SET start_lease_until = NULL WHERE id = $1 AND admitted_at IS NULL',
);

/** The start failed: the next duplicate (or the sweeper) tries it at once instead of later. */
export async function giveBackStartLease(db: Queryable, jobId: string): Promise<void> {
  await db.query(GIVE_BACK_START_LEASE([jobId]));
}
