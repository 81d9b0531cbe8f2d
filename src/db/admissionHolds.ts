/**
 * Operators' admission holds (migration 0031): while one holds, jobs of its type (or of every
 * type) are recorded but not admitted. A hold and a release are each one kept change.
 */
import type { Queryable } from './pool';
import { holdChange } from './providerHolds';
import { preparedStatement } from './statements';

export interface AdmissionHold {
  /** Null: every job type. */
  jobType: string | null;
  heldAt: Date;
  heldBy: string;
  reason: string;
}

interface HoldRow {
  job_type: string | null;
  held_at: Date;
  held_by: string;
  reason: string;
}

const toHold = (row: HoldRow): AdmissionHold => ({
  jobType: row.job_type,
  heldAt: row.held_at,
  heldBy: row.held_by,
  reason: row.reason,
});

const LIST_HOLDS = preparedStatement(
  'admission-holds.list',
  `SELECT job_type, held_at, held_by, reason FROM admission_holds ORDER BY job_type NULLS FIRST`,
);

export async function listAdmissionHolds(db: Queryable): Promise<AdmissionHold[]> {
  const { rows } = await db.query<HoldRow>(LIST_HOLDS([]));
  return rows.map(toHold);
}

const HOLD_OF_JOB = preparedStatement(
  'admission-holds.of-job',
  `SELECT h.job_type, h.held_at, h.held_by, h.reason
     FROM jobs j JOIN admission_holds h ON h.job_type IS NULL OR h.job_type = j.job_type
    WHERE j.id = $1 AND j.admitted_at IS NULL AND j.terminal_status IS NULL
    ORDER BY h.job_type NULLS LAST
    LIMIT 1`,
);

/**
 * The hold that keeps this job from being admitted now: only a job never admitted, and still
 * open, is held (a job admitted before the hold runs on, a cancelled one is let through to end).
 */
export async function admissionHoldOf(
  db: Queryable,
  jobId: string,
): Promise<AdmissionHold | undefined> {
  const { rows } = await db.query<HoldRow>(HOLD_OF_JOB([jobId]));
  return rows[0] && toHold(rows[0]);
}

const CHANGE_HOLD = preparedStatement(
  'admission-holds.change',
  `INSERT INTO admission_hold_changes (job_type, change, changed_by, reason)
   VALUES ($1, $2, $3, $4)
   RETURNING id::text, at`,
);

/**
 * Holds or releases admission of a job type (null: every type), recorded with who and why;
 * HoldConflict when it is already held, or not held to be released.
 */
export async function changeAdmissionHold(
  db: Queryable,
  change: { jobType: string | null; change: 'held' | 'released'; by: string; reason: string },
): Promise<{ id: string; at: Date }> {
  const { rows } = await holdChange(() =>
    db.query<{ id: string; at: Date }>(
      CHANGE_HOLD([change.jobType, change.change, change.by, change.reason]),
    ),
  );
  return rows[0]!;
}
