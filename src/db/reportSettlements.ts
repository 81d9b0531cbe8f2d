/**
 * Settling attempts from a provider's report (migration 0029): the attempts a report names, as
 * the plan judges them, and the kept record of each applied run.
 */
import type { AttemptState } from '../domain/job';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** An attempt a report names, with what the plan weighs against the report. */
export interface ReportedAttempt {
  id: string;
  jobId: string;
  provider: string;
  state: AttemptState;
  /** The provider answered the call 2xx: the work was done as far as we know. */
  successAnswered: boolean;
  /** A signed "failed" callback is held for it. */
  failureReported: boolean;
  /** A replay of its request lost its answer and may have done the work (migration 0025). */
  replayInDoubt: boolean;
  jobType: string;
  jobInput: Record<string, unknown>;
}

interface ReportedAttemptRow {
  id: string;
  job_id: string;
  provider: string;
  state: AttemptState;
  success_answered: boolean;
  failure_reported: boolean;
  replay_in_doubt: boolean;
  job_type: string;
  input: Record<string, unknown>;
}

const ATTEMPTS_BY_ID = preparedStatement(
  'report-settlements.attempts',
  `SELECT a.id, a.job_id, a.provider, a.state,
          a.success_answered_at IS NOT NULL AS success_answered,
          a.reported_failure IS NOT NULL AS failure_reported,
          a.replay_effect_unknown AS replay_in_doubt, j.job_type, j.input
     FROM attempts a JOIN jobs j ON j.id = a.job_id
    WHERE a.id = ANY($1::text[])`,
);

export async function attemptsById(
  db: Queryable,
  ids: string[],
): Promise<Map<string, ReportedAttempt>> {
  const { rows } = await db.query<ReportedAttemptRow>(ATTEMPTS_BY_ID([ids]));
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        jobId: row.job_id,
        provider: row.provider,
        state: row.state,
        successAnswered: row.success_answered,
        failureReported: row.failure_reported,
        replayInDoubt: row.replay_in_doubt,
        jobType: row.job_type,
        jobInput: row.input,
      },
    ]),
  );
}

const UNMENTIONED = preparedStatement(
  'report-settlements.unmentioned',
  `SELECT id, count(*) OVER ()::int AS total
     FROM attempts
    WHERE provider = $1 AND state = 'unknown' AND NOT (id = ANY($2::text[]))
    ORDER BY created_at, id
    LIMIT $3`,
);

/** The provider's unknown attempts a report does not name: how many, and the oldest few. */
export async function unknownAttemptsNotIn(
  db: Queryable,
  provider: string,
  named: string[],
  show: number,
): Promise<{ count: number; attemptIds: string[] }> {
  const { rows } = await db.query<{ id: string; total: number }>(
    UNMENTIONED([provider, named, show]),
  );
  return { count: rows[0]?.total ?? 0, attemptIds: rows.map((row) => row.id) };
}

const RECORD_RUN = preparedStatement(
  'report-settlements.record',
  `INSERT INTO report_settlements (provider, operator, reason, source, source_sha256, counts)
   VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text`,
);

/** Records an applied run before it settles anything; its id names it in each resolution. */
export async function recordSettlementRun(
  db: Queryable,
  run: {
    provider: string;
    operator: string;
    reason: string;
    source: string;
    sha256: string;
    counts: Record<string, number>;
  },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    RECORD_RUN([
      run.provider,
      run.operator,
      run.reason,
      run.source,
      run.sha256,
      JSON.stringify(run.counts),
    ]),
  );
  return rows[0]!.id;
}

const RECORD_ROW = preparedStatement(
  'report-settlements.record-row',
  `INSERT INTO report_settlement_rows (settlement_id, line, attempt_id, outcome, result, detail)
   VALUES ($1, $2, $3, $4, $5, $6)`,
);

/** What the resolve path answered for one row of an applied run. */
export async function recordSettlementRow(
  db: Queryable,
  row: {
    settlementId: string;
    line: number;
    attemptId: string;
    outcome: 'succeeded' | 'failed';
    result: 'settled' | 'held' | 'refused';
    detail: string;
  },
): Promise<void> {
  await db.query(
    RECORD_ROW([row.settlementId, row.line, row.attemptId, row.outcome, row.result, row.detail]),
  );
}
