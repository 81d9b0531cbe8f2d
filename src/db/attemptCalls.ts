/**
 * A provider call's begin and end in the attempts table: the one statement that begins it (and
 * reads its job), and its end with the ledger line. The rest of a call's life: callClock.ts
 * (when it is over), attemptSettlement.ts and attemptFailureReports.ts (an attempt with no
 * result); attempts.ts has the rows themselves, their reads and their creation.
 */
import { recordableCost, type CallOutcome, type Money, type TokenUsage } from '../domain/cost';
import {
  COLUMNS_OF_A,
  findAttempt,
  toAttempt,
  type AttemptRecord,
  type AttemptRow,
} from './attempts';
import { type Queryable } from './pool';
import { preparedStatement } from './statements';

/** The ledger line written with a call's end. */
export interface CallLedger {
  outcome: CallOutcome;
  usage?: TokenUsage;
  cost?: Money;
}

/**
 * The attempt as an UPDATE … RETURNING left it, or, when the UPDATE changed nothing (the
 * attempt was already past the states it acts on), as it is.
 */
export async function asChangedOrFound(
  db: Queryable,
  id: string,
  rows: AttemptRow[],
): Promise<AttemptRecord> {
  const attempt = rows[0] ? toAttempt(rows[0]) : await findAttempt(db, id);
  if (!attempt) throw new Error(`attempt ${id} does not exist`);
  return attempt;
}

const BEGIN_PROVIDER_CALL = preparedStatement(
  'attempts.begin-provider-call',
  `WITH job AS (
     SELECT j.id, j.terminal_status, j.job_type, j.input, j.workflow_id FROM jobs j
      WHERE j.id = (SELECT job_id FROM attempts WHERE id = $1)
      FOR SHARE
   )
   UPDATE attempts a
      SET state = CASE WHEN job.terminal_status IS NULL THEN 'running' ELSE 'cancelled' END,
          started_at = CASE WHEN job.terminal_status IS NULL THEN now() END,
          call_deadline_at = CASE WHEN job.terminal_status IS NULL
                                  THEN now() + (SELECT w.ms FROM unnest($2::text[], $3::bigint[]) AS w(provider, ms)
                                                 WHERE w.provider = a.provider) * interval '1 millisecond' END,
          -- The one execution that makes this change owns the call (migration 0018).
          call_token = CASE WHEN job.terminal_status IS NULL THEN gen_random_uuid() END,
          call_grace_ms = CASE WHEN job.terminal_status IS NULL
                               THEN (SELECT w.ms FROM unnest($2::text[], $4::int[]) AS w(provider, ms)
                                      WHERE w.provider = a.provider) END,
          finished_at = CASE WHEN job.terminal_status IS NULL THEN NULL ELSE now() END,
          error = CASE WHEN job.terminal_status IS NULL THEN a.error
                       ELSE jsonb_build_object('code', 'job_not_open', 'message',
                              'the job was ' || job.terminal_status || ' before the request left; nothing was sent') END,
          updated_at = now()
     FROM job
    WHERE a.id = $1 AND a.job_id = job.id AND a.state = 'starting'
      AND ($2::text[] IS NULL OR a.provider = ANY($2::text[]))
    RETURNING ${COLUMNS_OF_A}, a.call_token,
              job.job_type AS call_job_type, job.input AS call_job_input,
              job.workflow_id AS call_job_workflow_id`,
);

/** What a call needs of its job, read by the statement that begins the call. */
export interface CallJob {
  id: string;
  type: string;
  input: Record<string, unknown>;
  workflowId: string;
}

/**
 * `starting → running`, just before the request leaves, in one statement that also holds the
 * job row (FOR SHARE) and checks that the job is still open: a cancel or a winner that commits
 * first turns the attempt `cancelled` instead, and one that comes later waits for this
 * statement and then sees a running attempt. Returns the attempt as it now is; a caller must
 * send nothing unless it began the call itself (beginProviderCallOfJob gives it the call's
 * token then): a `running` attempt may be another execution's call.
 */
export async function beginProviderCall(
  db: Queryable,
  id: string,
  /**
   * The providers this caller can send to, with each one's late-result window (the call's
   * deadline is its start plus its provider's) and grace after it (a bare number: the window,
   * and no grace). An attempt on any other provider stays `starting`: it cannot be sent from
   * here, so it must not look as if it might have been. Without it, any provider, no deadline.
   */
  windows?: Readonly<Record<string, number | CallWindow>>,
): Promise<AttemptRecord> {
  return (await beginProviderCallOfJob(db, id, windows)).attempt;
}

/** A provider's late-result window for a call, and its grace after it (notFoundGraceMs). */
export interface CallWindow {
  lateResultMs: number;
  graceMs: number;
}

/**
 * What a begin gave its execution. `token` and `job` only when this execution began the call
 * (it alone may send it, and write what it came to); otherwise the attempt as it is.
 */
export type BegunCall =
  | { attempt: AttemptRecord; token: string; job: CallJob }
  | { attempt: AttemptRecord; token?: undefined; job?: undefined };

/**
 * beginProviderCall, and for the execution that began the call its token and the job the call
 * is for (the same statement reads it, so a call costs no second round trip for its input).
 */
export async function beginProviderCallOfJob(
  db: Queryable,
  id: string,
  windows?: Readonly<Record<string, number | CallWindow>>,
): Promise<BegunCall> {
  const providers = windows ? Object.keys(windows) : null;
  const windowOf = (name: string): CallWindow => {
    const given = windows![name]!;
    return typeof given === 'number' ? { lateResultMs: given, graceMs: 0 } : given;
  };
  const { rows } = await db.query<
    AttemptRow & {
      call_token: string | null;
      call_job_type: string;
      call_job_input: Record<string, unknown>;
      call_job_workflow_id: string;
    }
  >(
    BEGIN_PROVIDER_CALL([
      id,
      providers,
      providers ? providers.map((name) => windowOf(name).lateResultMs) : [],
      providers ? providers.map((name) => windowOf(name).graceMs) : [],
    ]),
  );
  const attempt = await asChangedOrFound(db, id, rows);
  const row = rows[0];
  // Changed to `cancelled` (the job had ended) draws no token: nothing may be sent.
  return row?.call_token
    ? {
        attempt,
        token: row.call_token,
        job: {
          id: row.job_id,
          type: row.call_job_type,
          input: row.call_job_input,
          workflowId: row.call_job_workflow_id,
        },
      }
    : { attempt };
}

const MARK_CALL_ENDED = preparedStatement(
  'attempts.mark-call-ended',
  `UPDATE attempts
      SET call_ended_at = now(), updated_at = now(), call_outcome = $3,
          input_tokens = $4, cached_input_tokens = $5, output_tokens = $6,
          cost = $7, cost_currency = $8, cost_unknown_reason = $9
    WHERE id = $1 AND call_token = $2 AND call_ended_at IS NULL`,
);

/**
 * The provider call of an attempt has ended: from now on its original request cannot land.
 * Its ledger line (what it came to, its usage and cost) is written in the same statement, by
 * the execution that began the call (its `token`) and only once. Says whether this wrote it.
 */
export async function markCallEnded(
  db: Queryable,
  id: string,
  token: string,
  ledger: CallLedger,
): Promise<boolean> {
  const { usage } = ledger;
  const { cost, unknownBecause } = recordableCost(ledger.cost);
  const { rowCount } = await db.query(
    MARK_CALL_ENDED([
      id,
      token,
      ledger.outcome,
      usage?.inputTokens ?? null,
      usage?.cachedInputTokens ?? null,
      usage?.outputTokens ?? null,
      cost ? String(cost.amount) : null,
      cost?.currency ?? null,
      unknownBecause ?? null,
    ]),
  );
  return rowCount === 1;
}
