/**
 * How an attempt whose call brought no result is settled: abandoned, failed on a look's
 * evidence, failed or unknown when its call ends, or left by a job's ending (the sweeper's).
 */
import { NEVER_SENT } from '../domain/retries';
import { asChangedOrFound, markCallEnded, type CallLedger } from './attemptCalls';
import { REPORT_ERROR } from './attemptFailureReports';
import { NO_REPLAY_MAY_LAND, noReplayInDoubt } from './attemptReplays';
import {
  COLUMNS,
  COLUMNS_OF_A,
  findAttempt,
  toAttempt,
  type AttemptRecord,
  type AttemptRow,
} from './attempts';
import { inTransaction, type Pool, type Queryable } from './pool';
import { preparedStatement } from './statements';

const SETTLE_ABANDONED = preparedStatement(
  'attempts.settle-abandoned',
  `UPDATE attempts a
      SET state = CASE WHEN a.state = 'running' THEN 'unknown'
                       WHEN j.terminal_status IS NULL THEN 'failed'
                       ELSE 'cancelled' END,
          error = CASE WHEN a.state = 'starting' THEN $3::jsonb ELSE $2::jsonb END,
          finished_at = CASE WHEN a.state = 'starting' THEN now() END,
          updated_at = now()
     FROM jobs j
    WHERE a.id = $1 AND j.id = a.job_id AND a.state IN ('starting', 'running')
    RETURNING ${COLUMNS_OF_A}`,
);

/**
 * The workflow stopped waiting for a call (timeout, cancel, crash). An attempt still `starting`
 * never sent anything and cannot any more (beginProviderCall needs `starting`): it is `failed`,
 * or `cancelled` when its job has ended. A `running` one may have taken effect: it is
 * `unknown`. Settled attempts stay as they are.
 */
export async function settleAbandonedAttempt(
  db: Queryable,
  id: string,
  error: Record<string, unknown>,
): Promise<AttemptRecord> {
  const neverSent = {
    code: NEVER_SENT,
    message: 'the request never left: the attempt was abandoned before its call began',
    abandonedBecause: error,
  };
  const { rows } = await db.query<AttemptRow>(
    SETTLE_ABANDONED([id, JSON.stringify(error), JSON.stringify(neverSent)]),
  );
  return asChangedOrFound(db, id, rows);
}

const FAIL_ON_EVIDENCE = preparedStatement(
  'attempts.fail-on-evidence',
  `UPDATE attempts a
      SET state = 'failed',
          error = $2::jsonb || CASE WHEN a.error IS NULL THEN '{}'::jsonb
                                    ELSE jsonb_build_object('earlier', a.error) END,
          finished_at = now(), updated_at = now()
    WHERE a.id = $1 AND a.state = 'unknown'
      AND (a.success_answered_at IS NOT NULL) = $3
      AND ($4::boolean IS NULL
           OR EXISTS (SELECT 1 FROM provider_record_breaches b WHERE b.provider = a.provider) = $4)
    RETURNING ${COLUMNS}`,
);

/**
 * A look's verdict that an unknown attempt did nothing (the certainty table's `failed`), written
 * only while the evidence it was decided on is still what the look read (a compare-and-set on
 * the evidence): the attempt still unknown, a 2xx seen or not as it was (the call's late end may
 * have brought one since), and, when given, the provider's records trusted or not as they were
 * (another attempt may have shown since that it files work under ids of its own, migration
 * 0017). Undefined when the evidence has changed: look again.
 */
export async function failOnEvidence(
  db: Queryable,
  id: string,
  error: { code: string; message: string },
  read: { successAnswered: boolean; recordsUntrusted?: boolean | undefined },
): Promise<AttemptRecord | undefined> {
  const { rows } = await db.query<AttemptRow>(
    FAIL_ON_EVIDENCE([
      id,
      JSON.stringify(error),
      read.successAnswered,
      read.recordsUntrusted ?? null,
    ]),
  );
  return rows[0] && toAttempt(rows[0]);
}

/**
 * The SQL of "a held failure report settles this attempt now" for a call that has just ended
 * without a result. Written into each SET expression, never read in a CTE: an UPDATE that waits
 * for a concurrent one re-evaluates its SET expressions on the row as that one left it, a CTE's
 * snapshot it would not.
 */
const HELD_REPORT_SETTLES = `($2 = 'unknown' AND NOT $5 AND success_answered_at IS NULL
                             AND reported_failure IS NOT NULL AND ${NO_REPLAY_MAY_LAND}
                             AND ${noReplayInDoubt()})`;

const SETTLE_WITHOUT_RESULT = preparedStatement(
  'attempts.settle-without-result',
  `UPDATE attempts
      SET state = CASE WHEN ${HELD_REPORT_SETTLES} THEN 'failed' ELSE $2 END,
          error = (CASE WHEN ${HELD_REPORT_SETTLES}
                        THEN ${REPORT_ERROR('reported_failure', `'it was reported failed while its call could still answer, and the call then ended without a success answer'`)}
                               || jsonb_build_object('callEnd', $3::jsonb)
                        ELSE $3::jsonb END)
                  || CASE WHEN state = 'unknown' AND error IS NOT NULL
                          THEN jsonb_build_object('earlier', error) ELSE '{}'::jsonb END,
          updated_at = now(),
          raw_output = COALESCE($4::jsonb, raw_output),
          success_answered_at = CASE WHEN $5 THEN coalesce(success_answered_at, now())
                                     ELSE success_answered_at END,
          finished_at = CASE WHEN $2 = 'unknown' AND NOT ${HELD_REPORT_SETTLES} THEN NULL
                             ELSE now() END
    WHERE id = $1 AND state IN ('starting', 'running', 'unknown')
    RETURNING ${COLUMNS}`,
);

/**
 * Settles an attempt that produced no result: `failed` (definitely no effect), `unknown`
 * (may have taken effect) or `cancelled`. Idempotent; never rewrites a terminal attempt. An
 * attempt already `unknown` that is marked `unknown` again keeps its state and gains the newer
 * evidence (the earlier error is kept under `earlier`). A call that ends `unknown` while a
 * signed "failed" callback waits for it (and it answered no success) is `failed` by that
 * callback, decided in the same statement so that no interleaving with the callback is lost.
 */
export async function settleAttemptWithoutResult(
  db: Queryable,
  id: string,
  state: 'failed' | 'unknown' | 'cancelled',
  error: Record<string, unknown>,
  /** What the provider answered, when the answer itself was the problem (kept for inspection). */
  rawOutput?: unknown,
  /** The provider (with side effects) answered 2xx: evidence of work, kept on the row. */
  successAnswered = false,
): Promise<AttemptRecord> {
  const { rows } = await db.query<AttemptRow>(
    SETTLE_WITHOUT_RESULT([
      id,
      state,
      JSON.stringify(error),
      rawOutput === undefined ? null : JSON.stringify(rawOutput),
      successAnswered,
    ]),
  );
  return asChangedOrFound(db, id, rows);
}

/**
 * A call that ended without a result to record: its end (with its ledger line) and what it
 * makes of the attempt, in one transaction. Apart, a success answer that broke the contract
 * would be an ended call without its evidence of work for a moment, in which a held "failed"
 * report or two "no record" lookups could fail a charge that happened (and a worker that died
 * there would lose the evidence for good). Written only by the execution that began the call
 * (its `token`): any other, or the same one again, writes nothing and gets the attempt as it is.
 */
export function endCallWithoutResult(
  pool: Pool,
  id: string,
  token: string,
  ledger: CallLedger,
  settlement: {
    state: 'failed' | 'unknown';
    error: Record<string, unknown>;
    rawOutput?: unknown;
    successAnswered?: boolean;
  },
): Promise<AttemptRecord> {
  return inTransaction(pool, async (tx) => {
    if (!(await markCallEnded(tx, id, token, ledger))) {
      const attempt = await findAttempt(tx, id);
      if (!attempt) throw new Error(`attempt ${id} does not exist`);
      return attempt;
    }
    return settleAttemptWithoutResult(
      tx,
      id,
      settlement.state,
      settlement.error,
      settlement.rawOutput,
      settlement.successAnswered,
    );
  });
}

const SETTLE_LEFT_BY_ENDINGS = preparedStatement(
  'attempts.settle-left-by-endings',
  `SELECT coalesce(sum(settle_attempts_of_ended_job(ended.id, ended.terminal_status,
                                                    ended.completed_by, false)), 0)::int AS settled
     FROM (SELECT DISTINCT j.id, j.terminal_status, j.completed_by
             FROM attempts a JOIN jobs j ON j.id = a.job_id
            WHERE a.state IN ('starting', 'running') AND j.terminal_status IS NOT NULL
              AND a.id IS DISTINCT FROM j.completed_by
            ORDER BY j.id
            LIMIT $1) ended`,
);

/**
 * Attempts an ending left `starting` or `running` (migration 0018): one whose row another
 * transaction held when the job ended, or one written as the job ended. Settled as the ending
 * would have (`cancelled`, `unknown`), waiting for their rows this time. Returns how many.
 */
export async function settleAttemptsLeftByEndings(db: Queryable, jobs: number): Promise<number> {
  const { rows } = await db.query<{ settled: number }>(SETTLE_LEFT_BY_ENDINGS([jobs]));
  return rows[0]?.settled ?? 0;
}

const UNKNOWN_ATTEMPTS_OF_ENDED_JOBS = preparedStatement(
  'attempts.unknown-of-ended-jobs',
  `SELECT a.id FROM attempts a JOIN jobs j ON j.id = a.job_id
    WHERE a.state = 'unknown' AND j.terminal_status IS NOT NULL AND a.id > $1
    ORDER BY a.id LIMIT $2`,
);

/**
 * Unknown attempts whose job has ended (cancelled while a call was out, say): no workflow looks
 * at them any more, so the sweeper does. A page of ids after `after`, in id order.
 */
export async function unknownAttemptsOfEndedJobs(
  db: Queryable,
  page: { after: string; limit: number },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    UNKNOWN_ATTEMPTS_OF_ENDED_JOBS([page.after, page.limit]),
  );
  return rows.map((row) => row.id);
}
