import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/**
 * The 95th percentile duration of a provider's recent successful attempts (the hedge delay).
 * Its shape matches the partial index attempts_recent_successes_idx (migration 0004).
 */
export const OBSERVED_P95_SQL = `
  SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95, count(*)::int AS n
    FROM (SELECT extract(epoch FROM finished_at - started_at) * 1000 AS ms
            FROM attempts
           WHERE provider = $1 AND state = 'succeeded' AND started_at IS NOT NULL
           ORDER BY finished_at DESC
           LIMIT 200) recent`;

const OBSERVED_P95 = preparedStatement('provider-stats.observed-p95', OBSERVED_P95_SQL);

/** The p95 in milliseconds, once there are enough samples to believe it. */
export async function observedP95Ms(
  db: Queryable,
  provider: string,
  minSamples = 20,
): Promise<number | undefined> {
  const { rows } = await db.query<{ p95: number | null; n: number }>(OBSERVED_P95([provider]));
  const row = rows[0];
  return row && row.n >= minSamples && row.p95 !== null ? Math.round(row.p95) : undefined;
}
