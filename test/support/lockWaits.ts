import type { Pool } from '../../src/db/pool';
import { eventually } from './polling';

/**
 * How many statements of `pool`'s database that start with `prefix` wait for a lock now (a row
 * or table another transaction holds), as PostgreSQL itself reports them. A statement's words
 * are compared whatever whitespace is between them, so a prefix can name a multi-line statement
 * by its first words (`UPDATE attempts SET reported_failure`).
 */
export async function lockWaiters(pool: Pool, prefix: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND ltrim(regexp_replace(query, '\\s+', ' ', 'g')) ILIKE $1`,
    [`${prefix.trim().replace(/\s+/g, ' ')}%`],
  );
  return rows[0]!.n;
}

/**
 * Waits until `work` is seen waiting for a lock (at least `count` statements that start with
 * `prefix`), or has settled without waiting; says which. A caller that expects the wait asserts
 * `'waiting'`: code that should wait and does not then fails at once, naming what it did instead.
 */
export async function waitingOrSettled<T>(
  pool: Pool,
  prefix: string,
  work: Promise<T>,
  count = 1,
): Promise<'waiting' | { settled: T | { failed: string } }> {
  let settled: { settled: T | { failed: string } } | undefined;
  work.then(
    (value) => (settled = { settled: value }),
    (error: unknown) => (settled = { settled: { failed: String(error) } }),
  );
  const seen = await eventually(
    async () => ({ waiters: await lockWaiters(pool, prefix), settled }),
    (now) => now.waiters >= count || now.settled !== undefined,
  );
  return seen.waiters >= count && seen.settled === undefined ? 'waiting' : seen.settled!;
}
