import { insertJobOrFindExisting, type JobRecord } from '../../src/db/jobs';
import type { Pool } from '../../src/db/pool';
import { requestFingerprint } from '../../src/domain/fingerprint';
import { jobWorkflowId } from '../../src/domain/workflowId';
import { TEST_OWNER } from './identities';
import { eventually } from './polling';
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
 * Waits until an attempt's call is over (answered, or cut off when its late-result window
 * closed): from then on nothing but a look or an operator settles it.
 */
export async function untilCallEnded(pool: Pool, attemptId: string): Promise<void> {
  await eventually(
    () =>
      pool.query('SELECT 1 FROM attempts WHERE id = $1 AND call_ended_at IS NOT NULL', [attemptId]),
    (ended) => ended.rowCount === 1,
    60_000,
  );
}

/** Where the reconciler's looks at one attempt stand: the next one due, and whether an operator is needed. */
export async function attemptChecks(
  pool: Pool,
  attemptId: string,
): Promise<{ nextCheckAt: Date | null; needsOperator: boolean } | undefined> {
  const { rows } = await pool.query<{ nextCheckAt: Date | null; needsOperator: boolean }>(
    'SELECT next_check_at AS "nextCheckAt", needs_operator AS "needsOperator" FROM attempts WHERE id = $1',
    [attemptId],
  );
  return rows[0];
}

/**
 * Everything the database holds of one job: its row, its attempts and its race events. A refused
 * action is checked by comparing this before and after: a refusal changes nothing. The looks'
 * schedule on each attempt is left out (see below).
 */
export async function rowsOfJob(stack: TestStack, jobId: string) {
  const [job, attempts, races] = await Promise.all([
    stack.pool.query('SELECT * FROM jobs WHERE id = $1', [jobId]),
    stack.pool.query('SELECT * FROM attempts WHERE job_id = $1 ORDER BY seq', [jobId]),
    stack.pool.query('SELECT * FROM race_events WHERE job_id = $1 ORDER BY id', [jobId]),
  ]);
  // When an unknown attempt is looked at next is the reconciler's bookkeeping, written in the
  // background whatever else happens: not what a refusal could have changed.
  const looked = attempts.rows.map((row: Record<string, unknown>) => {
    const { next_check_at: _next, check_delay_ms: _delay, needs_operator: _noted, ...rest } = row;
    return rest;
  });
  return { job: job.rows, attempts: looked, races: races.rows };
}

/**
 * A summary job's row as the API writes it, with no workflow started: what a crash between the
 * insert and the start leaves, or a job created under a configuration since changed.
 */
export async function insertSummaryJob(
  pool: Pool,
  job: { key: string; providers: string[]; workflowId?: string },
): Promise<JobRecord> {
  const intent = {
    type: 'summarize',
    input: { text: `Written straight to the table for ${job.key}.` },
    providers: job.providers,
    mode: 'exclusive' as const,
  };
  const { job: row } = await insertJobOrFindExisting(pool, {
    ownerId: TEST_OWNER,
    idempotencyKey: job.key,
    requestFingerprint: requestFingerprint(intent),
    intent,
    workflowId: job.workflowId ?? jobWorkflowId(TEST_OWNER, job.key),
  });
  return row;
}
