import type { Pool } from '../../src/db/pool';
import type { TestStack } from './stack';

export interface AttemptRow {
  id: string;
  seq: number;
  provider: string;
  state: string;
  created_at: Date;
  finished_at: Date | null;
}

export async function attemptRows(pool: Pool, jobId: string): Promise<AttemptRow[]> {
  const { rows } = await pool.query<AttemptRow>(
    'SELECT id, seq, provider, state, created_at, finished_at FROM attempts WHERE job_id = $1 ORDER BY seq',
    [jobId],
  );
  return rows;
}

/**
 * Everything the database holds of one job: its row, its attempts and its race events. A refused
 * action is checked by comparing this before and after: a refusal changes nothing.
 */
export async function rowsOfJob(stack: TestStack, jobId: string) {
  const [job, attempts, races] = await Promise.all([
    stack.pool.query('SELECT * FROM jobs WHERE id = $1', [jobId]),
    stack.pool.query('SELECT * FROM attempts WHERE job_id = $1 ORDER BY seq', [jobId]),
    stack.pool.query('SELECT * FROM race_events WHERE job_id = $1 ORDER BY id', [jobId]),
  ]);
  return { job: job.rows, attempts: attempts.rows, races: races.rows };
}
