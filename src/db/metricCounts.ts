import type { Queryable } from './pool';

/** Read at every scrape: each walks the partial index of in-flight attempts, never whole tables. */
export const ATTEMPTS_IN_FLIGHT_SQL = `
  SELECT state, count(*)::int AS n FROM attempts
   WHERE state IN ('starting', 'running', 'unknown') GROUP BY state`;
export const JOBS_UNKNOWN_SQL = `
  SELECT count(DISTINCT job_id)::int AS n FROM attempts WHERE state = 'unknown'`;
/** Since the oldest unknown attempt became so (migration 0015); 0 when none is. */
export const OLDEST_UNKNOWN_SQL = `
  SELECT coalesce(extract(epoch FROM now() - min(unknown_since)), 0)::float8 AS seconds
    FROM attempts WHERE state = 'unknown'`;

/**
 * Folds the deltas the triggers of migration 0005 append into metric_totals. The totals rows are
 * locked in one order (ORDER BY), so replicas folding at the same time queue instead of
 * deadlocking; a delta one of them already folded is skipped by the other.
 */
const FOLD_METRIC_DELTAS_SQL = `
  WITH drained AS (DELETE FROM metric_deltas RETURNING metric, label, delta)
  INSERT INTO metric_totals AS total (metric, label, n)
  SELECT metric, label, sum(delta) FROM drained GROUP BY metric, label ORDER BY metric, label
  ON CONFLICT (metric, label) DO UPDATE SET n = total.n + EXCLUDED.n`;
const METRIC_TOTALS_SQL = 'SELECT metric, label, n FROM metric_totals';

export interface MetricTotal {
  metric: string;
  label: string;
  n: number;
}

export async function foldMetricDeltas(db: Queryable): Promise<void> {
  await db.query(FOLD_METRIC_DELTAS_SQL);
}

/** Every all-time total the triggers keep (fold first to include what just changed). */
export async function metricTotals(db: Queryable): Promise<MetricTotal[]> {
  return (await db.query<MetricTotal>(METRIC_TOTALS_SQL)).rows;
}

/** Attempts that may still take effect, by state. */
export async function attemptsInFlight(
  db: Queryable,
): Promise<Array<{ state: string; n: number }>> {
  return (await db.query<{ state: string; n: number }>(ATTEMPTS_IN_FLIGHT_SQL)).rows;
}

/** Jobs, open or ended, with an attempt still unknown. */
export async function jobsWithUnknownAttempts(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>(JOBS_UNKNOWN_SQL)).rows[0]?.n ?? 0;
}

/** How long the oldest attempt still unknown has been unknown, in seconds. */
export async function oldestUnknownAttemptSeconds(db: Queryable): Promise<number> {
  return (await db.query<{ seconds: number }>(OLDEST_UNKNOWN_SQL)).rows[0]?.seconds ?? 0;
}
