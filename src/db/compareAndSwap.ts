import { markCallEnded, type CallLedger } from './attemptCalls';
import { findAttempt, findAttemptForUpdate, type AttemptRecord } from './attempts';
import { ENDED_JOB_COLUMNS, toEndedJob, type EndedJob, type EndedJobRow } from './endedJobs';
import { findJob, type JobRecord } from './jobs';
import { inTransaction, type Pool, type Queryable } from './pool';
import { preparedStatement } from './statements';

export type RecordResultOutcome =
  | {
      outcome: 'won';
      attemptId: string;
      version: number;
      /** Only when this call swapped the result in: a repeat of a won swap ended nothing. */
      ended?: EndedJob;
    }
  | {
      outcome: 'lost';
      attemptId: string;
      winnerAttemptId: string | null;
      expectedVersion: number;
      observedVersion: number;
    };

/**
 * The only writer of a job's result: a compare-and-swap on the job version the attempt read.
 * One row updated → this attempt won. Zero rows → someone else already settled the job: the
 * attempt is `lost`, the race is recorded, and the payload is dropped (never merged, appended
 * or written over the winner). Safe to repeat: a settled attempt reports its earlier outcome.
 */
export async function recordAttemptResult(
  pool: Pool,
  input: RecordResultInput,
): Promise<RecordResultOutcome> {
  return (await recordAttemptResultAndRead(pool, input)).outcome;
}

export interface RecordResultInput {
  attemptId: string;
  result: unknown;
  /**
   * The ledger line of the call that brought the result, when one did: written in the same
   * transaction, as `won` or `lost`, so that whoever sees the job end sees what its call cost;
   * by the execution that began the call (its token), as every write about a call.
   */
  callEnd?: Omit<CallLedger, 'outcome'> & { token: string };
}

/**
 * recordAttemptResult, and the attempt and its job as the same transaction left them: what the
 * caller reports next needs no transaction of its own.
 */
export async function recordAttemptResultAndRead(
  pool: Pool,
  input: RecordResultInput,
): Promise<{ outcome: RecordResultOutcome; attempt: AttemptRecord; job: JobRecord | undefined }> {
  return inTransaction(pool, async (tx) => {
    const outcome = await recordAttemptResultIn(tx, input);
    if (input.callEnd) {
      const { token, ...ledger } = input.callEnd;
      await markCallEnded(tx, input.attemptId, token, { ...ledger, outcome: outcome.outcome });
    }
    const attempt = await findAttempt(tx, input.attemptId);
    if (!attempt) throw new Error(`attempt ${input.attemptId} vanished`);
    return { outcome, attempt, job: await findJob(tx, attempt.jobId) };
  });
}

const JOB_VERSION = preparedStatement('cas.job-version', 'SELECT version FROM jobs WHERE id = $1');
const RACE_LOST_BY = preparedStatement(
  'cas.race-lost-by',
  `SELECT winning_attempt_id, expected_version, observed_version
     FROM race_events WHERE losing_attempt_id = $1`,
);
const SWAP_IN_RESULT = preparedStatement(
  'cas.swap-in-result',
  `UPDATE jobs
      SET result = $3, completed_by = $4, terminal_status = 'succeeded',
          version = version + 1, finished_at = now(), updated_at = now()
    -- planted-bug site (tools/chaos/plantedBugs.ts): cas-without-guard
    WHERE id = $1 AND version = $2 AND completed_by IS NULL
    RETURNING version, ${ENDED_JOB_COLUMNS}`,
);
const MARK_ATTEMPT_SUCCEEDED = preparedStatement(
  'cas.mark-attempt-succeeded',
  `UPDATE attempts SET state = 'succeeded', finished_at = now(), updated_at = now() WHERE id = $1`,
);
const JOB_OUTCOME = preparedStatement(
  'cas.job-outcome',
  'SELECT version, completed_by FROM jobs WHERE id = $1',
);
const RECORD_RACE = preparedStatement(
  'cas.record-race',
  `INSERT INTO race_events (job_id, losing_attempt_id, winning_attempt_id, expected_version, observed_version)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (losing_attempt_id) DO NOTHING`,
);
const MARK_ATTEMPT_LOST = preparedStatement(
  'cas.mark-attempt-lost',
  `UPDATE attempts SET state = 'lost', finished_at = now(), updated_at = now() WHERE id = $1`,
);

/** The compare-and-swap inside a transaction the caller holds (see recordAttemptResult). */
export async function recordAttemptResultIn(
  tx: Queryable,
  input: { attemptId: string; result: unknown },
): Promise<RecordResultOutcome> {
  const attempt = await findAttemptForUpdate(tx, input.attemptId);
  if (!attempt) throw new Error(`attempt ${input.attemptId} does not exist`);

  if (attempt.state === 'succeeded') {
    const job = await tx.query<{ version: number }>(JOB_VERSION([attempt.jobId]));
    return { outcome: 'won', attemptId: attempt.id, version: job.rows[0]?.version ?? 0 };
  }
  if (attempt.state === 'lost') {
    const race = await tx.query<{
      winning_attempt_id: string | null;
      expected_version: number;
      observed_version: number;
    }>(RACE_LOST_BY([attempt.id]));
    const event = race.rows[0];
    return {
      outcome: 'lost',
      attemptId: attempt.id,
      winnerAttemptId: event?.winning_attempt_id ?? null,
      expectedVersion: event?.expected_version ?? attempt.readVersion,
      observedVersion: event?.observed_version ?? attempt.readVersion,
    };
  }
  if (attempt.state === 'starting') {
    throw new Error(`attempt ${attempt.id} never started; it cannot have a result`);
  }
  // A result for an attempt already settled as failed or cancelled (an operator's verdict, a
  // provider's) cannot win: the payload is dropped and the contradiction kept as a race.
  const settledWithoutResult = attempt.state === 'failed' || attempt.state === 'cancelled';

  const swapped = settledWithoutResult
    ? { rows: [] as Array<{ version: number } & EndedJobRow> }
    : await tx.query<{ version: number } & EndedJobRow>(
        SWAP_IN_RESULT([
          attempt.jobId,
          attempt.readVersion,
          JSON.stringify(input.result),
          attempt.id,
        ]),
      );
  const won = swapped.rows[0];
  if (won) {
    await tx.query(MARK_ATTEMPT_SUCCEEDED([attempt.id]));
    return { outcome: 'won', attemptId: attempt.id, version: won.version, ended: toEndedJob(won) };
  }

  const current = await tx.query<{ version: number; completed_by: string | null }>(
    JOB_OUTCOME([attempt.jobId]),
  );
  const job = current.rows[0];
  if (!job) throw new Error(`job ${attempt.jobId} does not exist`);
  await tx.query(
    RECORD_RACE([attempt.jobId, attempt.id, job.completed_by, attempt.readVersion, job.version]),
  );
  if (!settledWithoutResult) {
    await tx.query(MARK_ATTEMPT_LOST([attempt.id]));
  }
  return {
    outcome: 'lost',
    attemptId: attempt.id,
    winnerAttemptId: job.completed_by,
    expectedVersion: attempt.readVersion,
    observedVersion: job.version,
  };
}
