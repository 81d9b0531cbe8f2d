/**
 * When an unknown attempt of an open job is looked at next (migration 0014): each look writes
 * the next one's time, and the workers' reconciler takes the attempts whose time has come.
 */
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** The pauses between looks: the first, and the longest the doubling reaches. */
export interface CheckPauses {
  firstMs: number;
  maxMs: number;
}

const SCHEDULE_NEXT_CHECK = preparedStatement(
  'attempts.schedule-next-check',
  `WITH before AS (
     SELECT id, check_delay_ms, needs_operator FROM attempts
      WHERE id = $1 AND state = 'unknown' FOR UPDATE),
   pause AS (
     SELECT id, needs_operator,
            least(coalesce(check_delay_ms * 2, $2::int), $3::int) AS doubled,
            check_delay_ms
       FROM before)
   UPDATE attempts a
      SET check_delay_ms = CASE WHEN $4::int IS NULL THEN p.doubled ELSE p.check_delay_ms END,
          next_check_at = now() + coalesce($4::int, p.doubled) * interval '1 millisecond',
          needs_operator = $5
     FROM pause p
    WHERE a.id = p.id
   RETURNING $5 AND NOT p.needs_operator AS operator_newly_needed`,
);

/**
 * After a look that left the attempt unknown: the next look is due after the doubled pause (or
 * in `inMs`, when the look itself knows when it is worth asking again). Says whether this look
 * was the first to find that only an operator can settle it. An attempt settled since the look
 * is left alone: its settling made its wake-up due (migration 0014).
 */
export async function scheduleNextCheck(
  db: Queryable,
  attemptId: string,
  pauses: CheckPauses,
  look: { inMs?: number; needsOperator: boolean },
): Promise<{ operatorNewlyNeeded: boolean }> {
  const { rows } = await db.query<{ operator_newly_needed: boolean }>(
    SCHEDULE_NEXT_CHECK([
      attemptId,
      pauses.firstMs,
      pauses.maxMs,
      look.inMs === undefined ? null : Math.max(1, Math.round(look.inMs)),
      look.needsOperator,
    ]),
  );
  return { operatorNewlyNeeded: rows[0]?.operator_newly_needed === true };
}

const CLAIM_DUE_CHECKS = preparedStatement(
  'attempts.claim-due-checks',
  `WITH due AS (
     SELECT id FROM attempts
      WHERE next_check_at <= now() AND provider = ANY($3::text[])
      ORDER BY next_check_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED)
   UPDATE attempts a
      SET next_check_at = now() + $2::int * interval '1 millisecond'
     FROM due, jobs j
    WHERE a.id = due.id AND j.id = a.job_id
   RETURNING a.id, a.job_id, j.workflow_id, a.state`,
);

/** An attempt whose turn has come: a look (it is unknown), or a wake-up (it settled). */
export interface DueCheck {
  attemptId: string;
  jobId: string;
  workflowId: string;
  settled: boolean;
}

/**
 * Takes up to `limit` attempts on `providers` whose turn has come, pushing it `leaseMs` ahead:
 * another worker skips them, and a look or wake-up that fails is tried again then.
 */
export async function claimDueChecks(
  db: Queryable,
  claim: { limit: number; leaseMs: number; providers: string[] },
): Promise<DueCheck[]> {
  const { rows } = await db.query<{
    id: string;
    job_id: string;
    workflow_id: string;
    state: string;
  }>(CLAIM_DUE_CHECKS([claim.limit, claim.leaseMs, claim.providers]));
  return rows.map((row) => ({
    attemptId: row.id,
    jobId: row.job_id,
    workflowId: row.workflow_id,
    settled: row.state !== 'unknown',
  }));
}

const TURN_AGAIN = preparedStatement(
  'attempts.turn-again',
  `UPDATE attempts SET next_check_at = now() + $2::int * interval '1 millisecond'
    WHERE id = $1 AND next_check_at IS NOT NULL`,
);

/** A look or wake-up that failed is tried again in `inMs`, sooner than its claim's lease. */
export async function turnAgain(db: Queryable, attemptId: string, inMs: number): Promise<void> {
  await db.query(TURN_AGAIN([attemptId, inMs]));
}

const WAKE_DONE = preparedStatement(
  'attempts.wake-done',
  `UPDATE attempts SET next_check_at = NULL
    WHERE id = $1 AND state <> 'unknown' AND next_check_at IS NOT NULL
   RETURNING provider, state,
             extract(epoch FROM finished_at - unknown_since)::float8 AS unknown_seconds`,
);

/** An attempt that was unknown, once its workflow has been woken to its settling. */
export interface SettledUnknown {
  provider: string;
  state: string;
  /** From becoming unknown to settling. */
  unknownSeconds: number;
}

/**
 * The workflow of a settled attempt has been told: nothing is due for it any more. Says, to the
 * one call that cleared the turn, how long the attempt was unknown (none if it never was).
 */
export async function wakeDone(
  db: Queryable,
  attemptId: string,
): Promise<SettledUnknown | undefined> {
  const { rows } = await db.query<{
    provider: string;
    state: string;
    unknown_seconds: number | null;
  }>(WAKE_DONE([attemptId]));
  const row = rows[0];
  return row && row.unknown_seconds !== null
    ? { provider: row.provider, state: row.state, unknownSeconds: row.unknown_seconds }
    : undefined;
}
