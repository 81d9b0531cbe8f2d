/**
 * A provider call's life in the attempts table: its clock (when it is over, when a "no record"
 * about it is believable), its start and end with the ledger line, and how an attempt whose
 * call brought no result is settled (abandoned, failed, unknown, a held failure report).
 * attempts.ts has the rows themselves, their reads and their creation.
 */
import { recordableCost, type CallOutcome, type Money, type TokenUsage } from '../domain/cost';
import { NEVER_SENT } from '../domain/retries';
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
async function asChangedOrFound(
  db: Queryable,
  id: string,
  rows: AttemptRow[],
): Promise<AttemptRecord> {
  const attempt = rows[0] ? toAttempt(rows[0]) : await findAttempt(db, id);
  if (!attempt) throw new Error(`attempt ${id} does not exist`);
  return attempt;
}

/**
 * When a call can no longer land, and when a "no record" about it becomes believable, on
 * PostgreSQL's clock: the call's recorded end, or its start plus the provider's late-result
 * window ($2 ms); then the provider's grace ($3 ms). Both as milliseconds from now (0 once
 * passed), so no worker's clock enters the comparison.
 */
const CALL_CLOCK = `
  coalesce(call_ended_at, started_at + $2::float8 * interval '1 millisecond') AS call_over_at,
  coalesce(call_ended_at, started_at + $2::float8 * interval '1 millisecond')
    + $3::float8 * interval '1 millisecond' AS believable_at`;

const msUntil = (column: string) =>
  `greatest(0, ceil(extract(epoch FROM ${column} - now()) * 1000))::float8`;

const CALL_TIMING = preparedStatement(
  'attempts.call-timing',
  `SELECT ${msUntil('t.call_over_at')} AS ms_until_call_over,
          ${msUntil('t.believable_at')} AS ms_until_believable
     FROM (SELECT ${CALL_CLOCK} FROM attempts WHERE id = $1 AND started_at IS NOT NULL) t`,
);

export interface CallTiming {
  /** 0 once the call can no longer land (it ended, or its late-result window is over). */
  msUntilCallOver: number;
  /** 0 once, on top of that, the provider's grace has passed. */
  msUntilBelievable: number;
}

/** How long until an attempt's call is over, and a "no record" about it believable (see CALL_CLOCK). */
export async function callTiming(
  db: Queryable,
  id: string,
  window: { lateResultMs: number; graceMs: number },
): Promise<CallTiming | undefined> {
  const { rows } = await db.query<{ ms_until_call_over: number; ms_until_believable: number }>(
    CALL_TIMING([id, window.lateResultMs, window.graceMs]),
  );
  const row = rows[0];
  return (
    row && { msUntilCallOver: row.ms_until_call_over, msUntilBelievable: row.ms_until_believable }
  );
}

// One statement, one clock: the row is locked, its first "no record" noted only once believable,
// and "said twice, the grace apart" decided from the noted time and now(), both PostgreSQL's.
const NOTE_NO_RECORD = preparedStatement(
  'attempts.note-no-record',
  `WITH current AS (
     SELECT id, first_not_found_at AS first, ${CALL_CLOCK}
       FROM attempts WHERE id = $1 AND state = 'unknown' AND started_at IS NOT NULL
        FOR UPDATE
   ), noted AS (
     UPDATE attempts a SET first_not_found_at = coalesce(a.first_not_found_at, now()),
                           updated_at = now()
       FROM current c WHERE a.id = c.id AND now() >= c.believable_at
     RETURNING a.id
   )
   SELECT (c.first IS NOT NULL AND now() >= c.believable_at AND c.first < now()
           AND now() >= c.first + $3::float8 * interval '1 millisecond') AS confirmed,
          now() >= c.believable_at AS believable,
          ${msUntil('c.believable_at')} AS ms_until_believable,
          ${msUntil(`coalesce(c.first, now()) + $3::float8 * interval '1 millisecond'`)} AS ms_until_confirmable,
          (SELECT count(*) FROM noted)::int AS noted
     FROM current c`,
);

export type NoRecordVerdict =
  /** Said twice, the grace apart, both after the call was over: it may be believed. */
  | { verdict: 'confirmed' }
  /** Noted (or noted before): believed once a look this much later says it too. */
  | { verdict: 'noted'; recheckInMs: number }
  /** The call may still land: not noted; believable in this much time. */
  | { verdict: 'too-early'; recheckInMs: number };

/**
 * A status lookup found no record of an unknown attempt under our key (undefined: the attempt
 * is no longer unknown). Decided by one
 * statement on PostgreSQL's clock (never a worker's, whose clocks may disagree with it and with
 * each other): too early while the call may still land (its end or window, plus the grace);
 * otherwise the first such answer is noted, and one the grace after it confirms it.
 */
export async function noteNoRecord(
  db: Queryable,
  id: string,
  window: { lateResultMs: number; graceMs: number },
): Promise<NoRecordVerdict | undefined> {
  const { rows } = await db.query<{
    confirmed: boolean;
    believable: boolean;
    ms_until_believable: number;
    ms_until_confirmable: number;
  }>(NOTE_NO_RECORD([id, window.lateResultMs, window.graceMs]));
  const row = rows[0];
  // No longer unknown (settled meanwhile), or its call never began.
  if (!row) return undefined;
  if (row.confirmed) return { verdict: 'confirmed' };
  if (!row.believable) return { verdict: 'too-early', recheckInMs: row.ms_until_believable };
  return { verdict: 'noted', recheckInMs: Math.max(row.ms_until_confirmable, 100) };
}

const FORGET_NO_RECORD = preparedStatement(
  'attempts.forget-no-record',
  `UPDATE attempts SET first_not_found_at = NULL
    WHERE id = $1 AND state = 'unknown' AND first_not_found_at IS NOT NULL`,
);

/** A later lookup knew of the attempt after all (still processing): an earlier "no record" is void. */
export async function forgetNoRecord(db: Queryable, id: string): Promise<void> {
  await db.query(FORGET_NO_RECORD([id]));
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
                             AND reported_failure IS NOT NULL)`;

/**
 * The error a held failure report leaves on the attempt it settles: the operator's verdict, or
 * the provider's signed callback, with why it settles now.
 */
const REPORT_ERROR = (report: string, why: string) => `jsonb_build_object(
    'code', CASE WHEN ${report} ? 'operator' THEN 'operator' ELSE 'provider_callback' END,
    'message', ${report} ->> 'message')
  || CASE WHEN ${report} ? 'operator'
          THEN jsonb_build_object('operator', ${report} ->> 'operator') ELSE '{}'::jsonb END
  || jsonb_build_object('settledBecause', ${why})`;

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

/**
 * The report that stands: the first one held, unless an operator reports now. An operator's
 * word settles even a call that answered a 2xx (they looked), and so replaces a provider's.
 */
const REPORT = `(CASE WHEN $2::jsonb ? 'operator' THEN $2::jsonb
                     ELSE coalesce(reported_failure, $2::jsonb) END)`;

/**
 * The SQL of "the held (or new) failure report settles this attempt now"; see above. A call
 * whose end is not written is over only once its window and then the provider's grace (as it
 * was when the call began) have passed: the worker stops listening when the window closes (never later, see
 * callProvider), and the grace is for it to write what it read, a 2xx above all.
 */
const REPORT_SETTLES = `(${REPORT} IS NOT NULL
                        AND (success_answered_at IS NULL OR $2::jsonb ? 'operator')
                        AND (started_at IS NULL OR call_ended_at IS NOT NULL
                             OR coalesce(call_deadline_at, 'infinity')
                                  + coalesce(call_grace_ms, 0) * interval '1 millisecond' <= now()))`;

const REPORT_FAILURE = preparedStatement(
  'attempts.report-failure',
  `UPDATE attempts
      SET reported_failure = ${REPORT},
          state = CASE WHEN ${REPORT_SETTLES} THEN 'failed' ELSE state END,
          error = CASE WHEN ${REPORT_SETTLES}
                       THEN ${REPORT_ERROR(REPORT, `'its call can no longer answer, and no success answer came'`)}
                            || CASE WHEN error IS NULL THEN '{}'::jsonb
                                    ELSE jsonb_build_object('earlier', error) END
                       ELSE error END,
          finished_at = CASE WHEN ${REPORT_SETTLES} THEN now() ELSE finished_at END,
          updated_at = now()
    WHERE id = $1 AND ${REPORT} IS NOT NULL
      AND state IN ('starting', 'running', 'unknown')
    RETURNING ${COLUMNS}`,
);

/** A report that an attempt failed: a provider's signed callback, or an operator's verdict. */
export interface FailureReport {
  message: string;
  at: string;
  /** Set when an operator said so (then the attempt's error names them). */
  operator?: string;
}

/** An operator's verdict that an attempt did nothing, as a report (applied or held). */
export function operatorsFailure(operator: string, reason: string): FailureReport {
  return { message: reason, at: new Date().toISOString(), operator };
}

/**
 * A report that an attempt failed (`report` null: apply the one held already): a provider's
 * signed callback, or an operator's verdict. It settles the attempt `failed` only when the call
 * can no longer answer (it never began, it ended, or its late-result window and the provider's
 * grace are over) and no success answer came: a call still in flight may yet answer success,
 * and a success answer outranks the report. Otherwise the report is held on the row, and the
 * call's own end, or the next look after the grace, applies it. The first report held stays,
 * unless an operator reports: the operator's word replaces it.
 */
export async function reportAttemptFailure(
  db: Queryable,
  id: string,
  report: FailureReport | null,
): Promise<AttemptRecord> {
  const { rows } = await db.query<AttemptRow>(
    REPORT_FAILURE([id, report === null ? null : JSON.stringify(report)]),
  );
  return asChangedOrFound(db, id, rows);
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

const PROVIDER_RECORDS_UNTRUSTED = preparedStatement(
  'providers.records-untrusted',
  'SELECT EXISTS (SELECT 1 FROM provider_record_breaches WHERE provider = $1) AS untrusted',
);

/**
 * Whether a provider has answered a 2xx in breach of its contract (migration 0017): then its
 * "no record under our key" proves nothing.
 */
export async function providerRecordsUntrusted(db: Queryable, provider: string): Promise<boolean> {
  const { rows } = await db.query<{ untrusted: boolean }>(PROVIDER_RECORDS_UNTRUSTED([provider]));
  return rows[0]?.untrusted ?? false;
}
