import type { Queryable } from './pool';

export interface RaceEvent {
  jobId: string;
  losingAttemptId: string;
  winningAttemptId: string | null;
  expectedVersion: number;
  observedVersion: number;
  occurredAt: Date;
}

/** Lost compare-and-swaps, newest first: results that arrived after the job was settled. */
export async function listRaces(
  db: Queryable,
  options: { jobId?: string; limit: number },
): Promise<RaceEvent[]> {
  const { rows } = await db.query<{
    job_id: string;
    losing_attempt_id: string;
    winning_attempt_id: string | null;
    expected_version: number;
    observed_version: number;
    occurred_at: Date;
  }>(
    `SELECT * FROM race_events WHERE $1::uuid IS NULL OR job_id = $1 ORDER BY occurred_at DESC, id DESC LIMIT $2`,
    [options.jobId ?? null, options.limit],
  );
  return rows.map((row) => ({
    jobId: row.job_id,
    losingAttemptId: row.losing_attempt_id,
    winningAttemptId: row.winning_attempt_id,
    expectedVersion: row.expected_version,
    observedVersion: row.observed_version,
    occurredAt: row.occurred_at,
  }));
}
