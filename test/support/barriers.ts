import { eventually } from './polling';
import type { TestStack } from './stack';

/**
 * A barrier in PostgreSQL: a transaction the test holds open. Whatever it locks (with `lock`,
 * or by writing through `client`) stops the system's conflicting statements until `release()`
 * commits; the test sees the blocked statement in pg_stat_activity, acts, then lets it go on.
 */
export async function holdTransaction(stack: TestStack, lock?: string) {
  const client = await stack.pool.connect();
  await client.query('BEGIN');
  if (lock) await client.query(lock);
  return {
    /** Runs in the barrier's own transaction (its writes are not blocked). */
    client,
    /** Waits until a statement that starts with `prefix` waits for the barrier. */
    async blocked(prefix: string): Promise<void> {
      await eventually(
        async () =>
          (
            await stack.pool.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'
                  AND ltrim(query) ILIKE $1`,
              [`${prefix}%`],
            )
          ).rows[0].n as number,
        (n) => n > 0,
      );
    },
    async release(): Promise<void> {
      await client.query('COMMIT');
      client.release();
    },
  };
}

/** A barrier that lets every read through but stops every write to `attempts`. */
export function holdAttemptWrites(stack: TestStack) {
  return holdTransaction(stack, 'LOCK TABLE attempts IN SHARE ROW EXCLUSIVE MODE');
}
