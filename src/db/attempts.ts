import { DEFAULT_BREAKER } from '../domain/breaker';
import { recordableCost, type CallOutcome, type Money, type TokenUsage } from '../domain/cost';
import { attemptId, type AttemptState, type TerminalJobStatus } from '../domain/job';
import { inTransaction, type Pool, type Queryable } from './pool';
import { claimProbe, providerUnavailability, type Unavailability } from './providerHealth';
import { preparedStatement } from './statements';

export interface AttemptRecord {
  id: string;
  jobId: string;
  seq: number;
  provider: string;
  state: AttemptState;
  exclusive: boolean;
  readVersion: number;
  error: unknown;
  rawOutput: unknown;
  startedAt: Date | null;
  /** When the provider call ended (answered, failed, or was cut off); null while it may still land. */
  callEndedAt: Date | null;
  /** When a status lookup first said "no record" after the call could no longer land. */
  firstNotFoundAt: Date | null;
  /** When a provider with side effects answered the call with a 2xx: evidence of work. */
  successAnsweredAt: Date | null;
  /** Until when the call may still land (its start plus the late-result window). */
  callDeadlineAt: Date | null;
  /** A signed "failed" callback held until the call is over without a success answer. */
  reportedFailure: Record<string, unknown> | null;
  finishedAt: Date | null;
  createdAt: Date;
  /** What the call came to, recorded with its end; null until then. */
  callOutcome: CallOutcome | null;
  /** Tokens the provider reported for the call; null when it reported none. */
  usage: TokenUsage | null;
  /** What the call cost; null when unknown (no usage, or no price). */
  cost: Money | null;
  /** The one attempt a half-open circuit breaker let through: its end closes or re-opens it. */
  breakerProbe: boolean;
}

/** The ledger line written with a call's end. */
export interface CallLedger {
  outcome: CallOutcome;
  usage?: TokenUsage;
  cost?: Money;
}

interface AttemptRow {
  id: string;
  job_id: string;
  seq: number;
  provider: string;
  state: AttemptState;
  exclusive: boolean;
  read_version: number;
  error: unknown;
  raw_output: unknown;
  started_at: Date | null;
  call_ended_at: Date | null;
  first_not_found_at: Date | null;
  success_answered_at: Date | null;
  call_deadline_at: Date | null;
  reported_failure: Record<string, unknown> | null;
  finished_at: Date | null;
  created_at: Date;
  call_outcome: CallOutcome | null;
  input_tokens: number | null;
  cached_input_tokens: number | null;
  output_tokens: number | null;
  /** numeric: text, so that no digit is lost on the way. */
  cost: string | null;
  cost_currency: string | null;
  breaker_probe: boolean;
}

/** The columns AttemptRow reads, named (see preparedStatement for why never `*`). */
const ATTEMPT_COLUMNS: ReadonlyArray<keyof AttemptRow> = [
  'id',
  'job_id',
  'seq',
  'provider',
  'state',
  'exclusive',
  'read_version',
  'error',
  'raw_output',
  'started_at',
  'call_ended_at',
  'first_not_found_at',
  'success_answered_at',
  'call_deadline_at',
  'reported_failure',
  'finished_at',
  'created_at',
  'call_outcome',
  'input_tokens',
  'cached_input_tokens',
  'output_tokens',
  'cost',
  'cost_currency',
  'breaker_probe',
];
const COLUMNS = ATTEMPT_COLUMNS.join(', ');
const COLUMNS_OF_A = ATTEMPT_COLUMNS.map((column) => `a.${column}`).join(', ');

function toAttempt(row: AttemptRow): AttemptRecord {
  return {
    id: row.id,
    jobId: row.job_id,
    seq: row.seq,
    provider: row.provider,
    state: row.state,
    exclusive: row.exclusive,
    readVersion: row.read_version,
    error: row.error,
    rawOutput: row.raw_output,
    startedAt: row.started_at,
    callEndedAt: row.call_ended_at,
    firstNotFoundAt: row.first_not_found_at,
    successAnsweredAt: row.success_answered_at,
    callDeadlineAt: row.call_deadline_at,
    reportedFailure: row.reported_failure,
    finishedAt: row.finished_at,
    createdAt: row.created_at,
    callOutcome: row.call_outcome,
    usage: usageOf(row),
    cost:
      row.cost === null || row.cost_currency === null
        ? null
        : { amount: Number(row.cost), currency: row.cost_currency },
    breakerProbe: row.breaker_probe,
  };
}

function usageOf(row: AttemptRow): TokenUsage | null {
  const usage: TokenUsage = {
    ...(row.input_tokens === null ? {} : { inputTokens: row.input_tokens }),
    ...(row.cached_input_tokens === null ? {} : { cachedInputTokens: row.cached_input_tokens }),
    ...(row.output_tokens === null ? {} : { outputTokens: row.output_tokens }),
  };
  return Object.keys(usage).length === 0 ? null : usage;
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

/** The database refused a second in-flight exclusive attempt (partial unique index). */
export class AttemptInFlightError extends Error {
  constructor(
    readonly jobId: string,
    readonly blocking: AttemptRecord | undefined,
  ) {
    super(
      blocking
        ? `job ${jobId} already has attempt ${blocking.id} ${blocking.state}`
        : `job ${jobId} already has an attempt in flight`,
    );
    this.name = 'AttemptInFlightError';
  }
}

/** The job ended (or never existed), so no attempt may start and nothing may be sent. */
export class JobNotOpenError extends Error {
  constructor(
    readonly jobId: string,
    readonly terminalStatus: TerminalJobStatus | null,
    readonly completedBy: string | null,
  ) {
    super(
      terminalStatus
        ? `job ${jobId} is ${terminalStatus}; no attempt may start`
        : `job ${jobId} does not exist`,
    );
    this.name = 'JobNotOpenError';
  }
}

const JOB_OPENNESS = preparedStatement(
  'attempts.job-openness',
  'SELECT terminal_status, completed_by FROM jobs WHERE id = $1',
);

async function jobNotOpen(db: Queryable, jobId: string): Promise<JobNotOpenError> {
  const { rows } = await db.query<{
    terminal_status: TerminalJobStatus | null;
    completed_by: string | null;
  }>(JOB_OPENNESS([jobId]));
  return new JobNotOpenError(
    jobId,
    rows[0]?.terminal_status ?? null,
    rows[0]?.completed_by ?? null,
  );
}

const FIND_ATTEMPT = preparedStatement(
  'attempts.find',
  `SELECT ${COLUMNS} FROM attempts WHERE id = $1`,
);

export async function findAttempt(db: Queryable, id: string): Promise<AttemptRecord | undefined> {
  const { rows } = await db.query<AttemptRow>(FIND_ATTEMPT([id]));
  return rows[0] && toAttempt(rows[0]);
}

const FIND_ATTEMPT_FOR_UPDATE = preparedStatement(
  'attempts.find-for-update',
  `SELECT ${COLUMNS} FROM attempts WHERE id = $1 FOR UPDATE`,
);

/** An attempt, its row locked until the caller's transaction ends. */
export async function findAttemptForUpdate(
  tx: Queryable,
  id: string,
): Promise<AttemptRecord | undefined> {
  const { rows } = await tx.query<AttemptRow>(FIND_ATTEMPT_FOR_UPDATE([id]));
  return rows[0] && toAttempt(rows[0]);
}

const LIST_ATTEMPTS = preparedStatement(
  'attempts.list',
  `SELECT ${COLUMNS} FROM attempts WHERE job_id = $1 ORDER BY seq`,
);

export async function listAttempts(db: Queryable, jobId: string): Promise<AttemptRecord[]> {
  const { rows } = await db.query<AttemptRow>(LIST_ATTEMPTS([jobId]));
  return rows.map(toAttempt);
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return pgError.code === '23505' && pgError.constraint === constraint;
}

const CREATE_ATTEMPT = preparedStatement(
  'attempts.create',
  `INSERT INTO attempts (id, job_id, seq, provider, exclusive, read_version, breaker_probe)
   SELECT $1, j.id, $3, $4, $5, j.version, $6 FROM jobs j WHERE j.id = $2 AND j.terminal_status IS NULL
      -- No new attempt to a provider cooling down or whose breaker is not closed, but the probe.
      AND ($6 OR NOT EXISTS (SELECT 1 FROM provider_health h
                              WHERE h.provider = $4 AND (h.cooldown_until > now() OR h.breaker <> 'closed')))
   ON CONFLICT (job_id, seq) DO NOTHING
   RETURNING ${COLUMNS}`,
);
const EXCLUSIVE_IN_FLIGHT = preparedStatement(
  'attempts.exclusive-in-flight',
  `SELECT ${COLUMNS} FROM attempts
    WHERE job_id = $1 AND exclusive AND state IN ('starting', 'running', 'unknown')`,
);

/** No new attempt may go to the provider now: it cools down, or its breaker is not closed. */
export class ProviderUnavailableError extends Error {
  constructor(readonly unavailability: Unavailability) {
    super(
      `provider ${unavailability.provider} takes no new attempt until ${unavailability.until.toISOString()}: ${unavailability.reason}`,
    );
    this.name = 'ProviderUnavailableError';
  }
}

/**
 * Creates attempt `seq` of a job in state `starting`, recording the job version it read.
 * Idempotent: the same (job, seq) returns the row created before. Refused with
 * ProviderUnavailableError while the provider cools down or its breaker is open, except for the
 * one probe a breaker whose cool-off (`coolOffMs`) is over lets through.
 */
export async function createAttempt(
  db: Queryable,
  input: { jobId: string; seq: number; provider: string; exclusive: boolean; coolOffMs?: number },
): Promise<AttemptRecord> {
  const id = attemptId(input.jobId, input.seq);
  const insert = async (probe: boolean): Promise<AttemptRecord | undefined> => {
    try {
      const { rows } = await db.query<AttemptRow>(
        CREATE_ATTEMPT([id, input.jobId, input.seq, input.provider, input.exclusive, probe]),
      );
      return rows[0] && toAttempt(rows[0]);
    } catch (error) {
      if (isUniqueViolation(error, 'attempts_one_in_flight_per_job')) {
        const { rows } = await db.query<AttemptRow>(EXCLUSIVE_IN_FLIGHT([input.jobId]));
        throw new AttemptInFlightError(input.jobId, rows[0] && toAttempt(rows[0]));
      }
      throw error;
    }
  };
  const created = await insert(false);
  if (created) return created;
  const existing = await findAttempt(db, id);
  if (!existing) {
    const coolOffMs = input.coolOffMs ?? DEFAULT_BREAKER.coolOffMs;
    const unavailable = await providerUnavailability(db, input.provider, coolOffMs);
    const notOpen = await jobNotOpen(db, input.jobId);
    if (!unavailable || notOpen.terminalStatus) throw notOpen;
    if (await claimProbe(db, input.provider, id, coolOffMs)) {
      const probe = await insert(true);
      if (probe) return probe;
    }
    throw new ProviderUnavailableError(unavailable);
  }
  if (existing.provider !== input.provider || existing.exclusive !== input.exclusive) {
    throw new Error(
      `attempt ${id} exists for provider ${existing.provider}, not ${input.provider}`,
    );
  }
  return existing;
}

const BEGIN_PROVIDER_CALL = preparedStatement(
  'attempts.begin-provider-call',
  `WITH job AS (
     SELECT j.id, j.terminal_status FROM jobs j
      WHERE j.id = (SELECT job_id FROM attempts WHERE id = $1)
      FOR SHARE
   )
   UPDATE attempts a
      SET state = CASE WHEN job.terminal_status IS NULL THEN 'running' ELSE 'cancelled' END,
          started_at = CASE WHEN job.terminal_status IS NULL THEN now() END,
          call_deadline_at = CASE WHEN job.terminal_status IS NULL
                                  THEN now() + (SELECT w.ms FROM unnest($2::text[], $3::bigint[]) AS w(provider, ms)
                                                 WHERE w.provider = a.provider) * interval '1 millisecond' END,
          finished_at = CASE WHEN job.terminal_status IS NULL THEN NULL ELSE now() END,
          error = CASE WHEN job.terminal_status IS NULL THEN a.error
                       ELSE jsonb_build_object('code', 'job_not_open', 'message',
                              'the job was ' || job.terminal_status || ' before the request left; nothing was sent') END,
          updated_at = now()
     FROM job
    WHERE a.id = $1 AND a.job_id = job.id AND a.state = 'starting'
      AND ($2::text[] IS NULL OR a.provider = ANY($2::text[]))
    RETURNING ${COLUMNS_OF_A}`,
);

/**
 * `starting → running`, just before the request leaves, in one statement that also holds the
 * job row (FOR SHARE) and checks that the job is still open: a cancel or a winner that commits
 * first turns the attempt `cancelled` instead, and one that comes later waits for this
 * statement and then sees a running attempt. Returns the attempt as it now is; a caller must
 * send nothing unless the state is `running`.
 */
export async function beginProviderCall(
  db: Queryable,
  id: string,
  /**
   * The providers this caller can send to, with each one's late-result window (the call's
   * deadline is its start plus its provider's). An attempt on any other provider stays
   * `starting`: it cannot be sent from here, so it must not look as if it might have been.
   * Without it, any provider, and no deadline.
   */
  lateWindowsMs?: Readonly<Record<string, number>>,
): Promise<AttemptRecord> {
  const providers = lateWindowsMs ? Object.keys(lateWindowsMs) : null;
  const { rows } = await db.query<AttemptRow>(
    BEGIN_PROVIDER_CALL([
      id,
      providers,
      providers ? providers.map((name) => lateWindowsMs![name]) : [],
    ]),
  );
  const attempt = rows[0] ? toAttempt(rows[0]) : await findAttempt(db, id);
  if (!attempt) throw new Error(`attempt ${id} does not exist`);
  return attempt;
}

const MARK_CALL_ENDED = preparedStatement(
  'attempts.mark-call-ended',
  `UPDATE attempts
      SET call_ended_at = now(), updated_at = now(), call_outcome = $2,
          input_tokens = $3, cached_input_tokens = $4, output_tokens = $5,
          cost = $6, cost_currency = $7, cost_unknown_reason = $8
    WHERE id = $1 AND call_ended_at IS NULL AND started_at IS NOT NULL`,
);

/**
 * The provider call of an attempt has ended: from now on its original request cannot land.
 * Its ledger line (what it came to, its usage and cost) is written in the same statement.
 */
export async function markCallEnded(db: Queryable, id: string, ledger: CallLedger): Promise<void> {
  const { usage } = ledger;
  const { cost, unknownBecause } = recordableCost(ledger.cost);
  await db.query(
    MARK_CALL_ENDED([
      id,
      ledger.outcome,
      usage?.inputTokens ?? null,
      usage?.cachedInputTokens ?? null,
      usage?.outputTokens ?? null,
      cost ? String(cost.amount) : null,
      cost?.currency ?? null,
      unknownBecause ?? null,
    ]),
  );
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
    code: 'never_sent',
    message: 'the request never left: the attempt was abandoned before its call began',
    abandonedBecause: error,
  };
  const { rows } = await db.query<AttemptRow>(
    SETTLE_ABANDONED([id, JSON.stringify(error), JSON.stringify(neverSent)]),
  );
  const attempt = rows[0] ? toAttempt(rows[0]) : await findAttempt(db, id);
  if (!attempt) throw new Error(`attempt ${id} does not exist`);
  return attempt;
}

/**
 * The SQL of "a held failure report settles this attempt now" for a call that has just ended
 * without a result. Written into each SET expression, never read in a CTE: an UPDATE that waits
 * for a concurrent one re-evaluates its SET expressions on the row as that one left it, a CTE's
 * snapshot it would not.
 */
const HELD_REPORT_SETTLES = `($2 = 'unknown' AND NOT $5 AND success_answered_at IS NULL
                             AND reported_failure IS NOT NULL)`;

const SETTLE_WITHOUT_RESULT = preparedStatement(
  'attempts.settle-without-result',
  `UPDATE attempts
      SET state = CASE WHEN ${HELD_REPORT_SETTLES} THEN 'failed' ELSE $2 END,
          error = (CASE WHEN ${HELD_REPORT_SETTLES}
                        THEN jsonb_build_object('code', 'provider_callback',
                               'message', reported_failure ->> 'message',
                               'settledBecause', 'a signed callback said it failed, and its call then ended without a success answer',
                               'callEnd', $3::jsonb)
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
  const attempt = rows[0] ? toAttempt(rows[0]) : await findAttempt(db, id);
  if (!attempt) throw new Error(`attempt ${id} does not exist`);
  return attempt;
}

/**
 * A call that ended without a result to record: its end (with its ledger line) and what it
 * makes of the attempt, in one transaction. Apart, a success answer that broke the contract
 * would be an ended call without its evidence of work for a moment, in which a held "failed"
 * report or two "no record" lookups could fail a charge that happened (and a worker that died
 * there would lose the evidence for good).
 */
export function endCallWithoutResult(
  pool: Pool,
  id: string,
  ledger: CallLedger,
  settlement: {
    state: 'failed' | 'unknown';
    error: Record<string, unknown>;
    rawOutput?: unknown;
    successAnswered?: boolean;
  },
): Promise<AttemptRecord> {
  return inTransaction(pool, async (tx) => {
    await markCallEnded(tx, id, ledger);
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

/** The SQL of "the held (or new) failure report settles this attempt now"; see above. */
const REPORT_SETTLES = `(coalesce(reported_failure, $2::jsonb) IS NOT NULL
                        AND success_answered_at IS NULL
                        AND (started_at IS NULL OR call_ended_at IS NOT NULL
                             OR coalesce(call_deadline_at, 'infinity') <= now()))`;

const REPORT_FAILURE = preparedStatement(
  'attempts.report-failure',
  `UPDATE attempts
      SET reported_failure = coalesce(reported_failure, $2::jsonb),
          state = CASE WHEN ${REPORT_SETTLES} THEN 'failed' ELSE state END,
          error = CASE WHEN ${REPORT_SETTLES}
                       THEN jsonb_build_object('code', 'provider_callback',
                              'message', coalesce(reported_failure, $2::jsonb) ->> 'message')
                            || CASE WHEN error IS NULL THEN '{}'::jsonb
                                    ELSE jsonb_build_object('earlier', error) END
                       ELSE error END,
          finished_at = CASE WHEN ${REPORT_SETTLES} THEN now() ELSE finished_at END,
          updated_at = now()
    WHERE id = $1 AND coalesce(reported_failure, $2::jsonb) IS NOT NULL
      AND state IN ('starting', 'running', 'unknown')
    RETURNING ${COLUMNS}`,
);

/**
 * A provider's signed "failed" report for an attempt (`report` null: apply the one held
 * already). It settles the attempt `failed` only when the call can no longer answer (it never
 * began, it ended, or its late-result window is over) and no success answer came: a call still
 * in flight may yet answer success, and a success answer outranks the report. Otherwise the
 * report is held on the row, and the call's own end applies it (settleAttemptWithoutResult).
 */
export async function reportAttemptFailure(
  db: Queryable,
  id: string,
  report: { message: string; at: string } | null,
): Promise<AttemptRecord> {
  const { rows } = await db.query<AttemptRow>(
    REPORT_FAILURE([id, report === null ? null : JSON.stringify(report)]),
  );
  const attempt = rows[0] ? toAttempt(rows[0]) : await findAttempt(db, id);
  if (!attempt) throw new Error(`attempt ${id} does not exist`);
  return attempt;
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
