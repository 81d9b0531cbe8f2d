import type { Pool } from 'pg';

/** The baseline's tables, beside ours in the same database: one row per create, one per result. */
export async function createBaselineTables(pool: Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE IF NOT EXISTS baseline_jobs (
      key        text PRIMARY KEY,
      owner_id   text NOT NULL,
      body       jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS baseline_results (
      id      text PRIMARY KEY,
      summary text NOT NULL
    );
  `);
}
