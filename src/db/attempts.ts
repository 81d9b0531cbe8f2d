import { DEFAULT_BREAKER } from '../domain/breaker';
import { type CallOutcome, type Money, type TokenUsage } from '../domain/cost';
import { Refusal } from '../domain/failures';
import { attemptId, type AttemptState, type TerminalJobStatus } from '../domain/job';
import { budgetGateRefusal } from './budgetGate';
import type { Queryable } from './pool';
import { asProbe, providerUnavailability, type Unavailability } from './providerHealth';
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

export interface AttemptRow {
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
export const ATTEMPT_COLUMNS: ReadonlyArray<keyof AttemptRow> = [
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
export const COLUMNS = ATTEMPT_COLUMNS.join(', ');
export const COLUMNS_OF_A = ATTEMPT_COLUMNS.map((column) => `a.${column}`).join(', ');

export function toAttempt(row: AttemptRow): AttemptRecord {
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

/** The database refused a second in-flight exclusive attempt (partial unique index). */
function attemptInFlight(jobId: string, blocking: AttemptRecord | undefined): Refusal {
  return new Refusal(
    'attemptInFlight',
    blocking
      ? `job ${jobId} already has attempt ${blocking.id} ${blocking.state}`
      : `job ${jobId} already has an attempt in flight`,
    {
      attemptId: blocking?.id,
      seq: blocking?.seq,
      provider: blocking?.provider,
      state: blocking?.state,
    },
  );
}

const JOB_OPENNESS = preparedStatement(
  'attempts.job-openness',
  'SELECT terminal_status, completed_by FROM jobs WHERE id = $1',
);

/** The job ended (or never existed), so no attempt may start and nothing may be sent. */
async function jobNotOpen(db: Queryable, jobId: string): Promise<Refusal | undefined> {
  const { rows } = await db.query<{
    terminal_status: TerminalJobStatus | null;
    completed_by: string | null;
  }>(JOB_OPENNESS([jobId]));
  const row = rows[0];
  if (row && !row.terminal_status) return undefined;
  return new Refusal(
    'jobNotOpen',
    row
      ? `job ${jobId} is ${row.terminal_status}; no attempt may start`
      : `job ${jobId} does not exist`,
    { terminalStatus: row?.terminal_status ?? null, completedBy: row?.completed_by ?? null },
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
  `INSERT INTO attempts (id, job_id, seq, provider, exclusive, read_version, breaker_probe,
                         worst_case, worst_case_currency)
   SELECT $1, j.id, $3, $4, $5, j.version, $6, $7, $8 FROM jobs j
    WHERE j.id = $2 AND j.terminal_status IS NULL
      -- No new attempt to a provider cooling down or whose breaker is not closed, but the probe;
      -- none at all to one an operator holds (0028).
      AND ($6 OR NOT EXISTS (SELECT 1 FROM provider_health h
                              WHERE h.provider = $4 AND (h.cooldown_until > now() OR h.breaker <> 'closed')))
      AND NOT EXISTS (SELECT 1 FROM provider_holds WHERE provider = $4)
   ON CONFLICT (job_id, seq) DO NOTHING
   RETURNING ${COLUMNS}`,
);
const EXCLUSIVE_IN_FLIGHT = preparedStatement(
  'attempts.exclusive-in-flight',
  `SELECT ${COLUMNS} FROM attempts
    WHERE job_id = $1 AND exclusive AND state IN ('starting', 'running', 'unknown')`,
);

/**
 * No new attempt may go to the provider now: it cools down, or its breaker is not closed.
 * Counted (the skip counter) by its cause.
 */
function providerUnavailable({ provider, until, reason, cause }: Unavailability): Refusal {
  return new Refusal(
    'providerUnavailable',
    `provider ${provider} takes no new attempt until ${until.toISOString()}: ${reason}`,
    {
      provider,
      reason,
      until: until.toISOString(),
      retryAfterSeconds: Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000)),
    },
    cause,
  );
}

/**
 * Creates attempt `seq` of a job in state `starting`, recording the job version it read.
 * Idempotent: the same (job, seq) returns the row created before. Refused (`providerUnavailable`)
 * while an operator holds the provider, or it cools down or its breaker is open, except for the
 * one probe a breaker whose cool-off (`coolOffMs`) is over lets through; refused `jobNotOpen` when the job is not open, and
 * `attemptInFlight` when an exclusive job has an attempt in flight.
 */
export async function createAttempt(
  db: Queryable,
  input: {
    jobId: string;
    seq: number;
    provider: string;
    exclusive: boolean;
    coolOffMs?: number;
    /** What the attempt may cost at most: reserved in its owner's budgets, when it has any. */
    worstCase?: Money;
  },
): Promise<AttemptRecord> {
  const id = attemptId(input.jobId, input.seq);
  const { worstCase } = input;
  const insert = async (probe: boolean): Promise<AttemptRecord | undefined> => {
    try {
      const { rows } = await db.query<AttemptRow>(
        CREATE_ATTEMPT([
          id,
          input.jobId,
          input.seq,
          input.provider,
          input.exclusive,
          probe,
          worstCase?.amount ?? null,
          worstCase?.currency ?? null,
        ]),
      );
      return rows[0] && toAttempt(rows[0]);
    } catch (error) {
      if (isUniqueViolation(error, 'attempts_one_in_flight_per_job')) {
        const { rows } = await db.query<AttemptRow>(EXCLUSIVE_IN_FLIGHT([input.jobId]));
        throw attemptInFlight(input.jobId, rows[0] && toAttempt(rows[0]));
      }
      throw budgetGateRefusal(error, id, input.provider) ?? error;
    }
  };
  // The INSERT is refused when the job is not open or the provider takes no new attempt; which
  // one is asked afterwards, and the answer may have changed meanwhile: a cool-down that ended
  // in between leaves an open job and an available provider, so the INSERT is simply tried again.
  for (let round = 1; ; round++) {
    const created = await insert(false);
    if (created) return created;
    const existing = await findAttempt(db, id);
    if (existing) {
      if (existing.provider !== input.provider || existing.exclusive !== input.exclusive) {
        throw new Error(
          `attempt ${id} exists for provider ${existing.provider}, not ${input.provider}`,
        );
      }
      return existing;
    }
    const coolOffMs = input.coolOffMs ?? DEFAULT_BREAKER.coolOffMs;
    const unavailable = await providerUnavailability(db, input.provider, coolOffMs);
    const notOpen = await jobNotOpen(db, input.jobId);
    if (notOpen) throw notOpen;
    if (unavailable) {
      const probe =
        unavailable.cause !== 'held' &&
        (await asProbe(db, input.provider, id, coolOffMs, () => insert(true)));
      if (probe) return probe;
      throw providerUnavailable(unavailable);
    }
    if (round >= 3)
      throw new Error(
        `attempt ${id} could not be created: the provider ${input.provider} kept changing between available and not`,
      );
  }
}
