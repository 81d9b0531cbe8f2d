import type { Pool } from 'pg';
import { OPERATOR_TOKEN } from '../../test/support/identities';
import { BENCH_TOKEN } from './environment';
import { waitUntil } from './scenario';

export const SUMMARY_TEXT =
  'The river rose in the night. By morning the low fields were under water, and the school was closed.';

export function jsonHeaders(token = BENCH_TOKEN): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

export function summarizeBody(
  options: { providers?: string[]; mode?: 'exclusive' | 'hedged' } = {},
): string {
  return JSON.stringify({ type: 'summarize', input: { text: SUMMARY_TEXT }, ...options });
}

/** Waits until none of our jobs whose key starts with `prefix` is still open. */
export async function drainJobs(pool: Pool, prefix: string): Promise<void> {
  await waitUntil(`the jobs ${prefix}* are terminal`, async () => {
    const { rows } = await pool.query<{ open: number }>(
      `SELECT count(*)::int AS open FROM jobs
        WHERE terminal_status IS NULL AND starts_with(idempotency_key, $1)`,
      [prefix],
    );
    return rows[0]!.open === 0;
  });
}

/** Creates a job and waits on it (long-polling the API) until it is terminal; its final status. */
export async function runJobThroughApi(apiUrl: string, key: string, body: string): Promise<string> {
  const created = await fetch(`${apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { ...jsonHeaders(), 'idempotency-key': key },
    body,
  });
  const job = (await created.json()) as { id: string; status: string };
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  let status = job.status;
  while (!['succeeded', 'failed', 'cancelled'].includes(status)) {
    const polled = await fetch(`${apiUrl}/v1/jobs/${job.id}?wait=30`, { headers: jsonHeaders() });
    if (!polled.ok) throw new Error(`GET job answered ${polled.status}`);
    status = ((await polled.json()) as { status: string }).status;
  }
  return status;
}

/** Cancels a job as the operator (the blocked row cleans up after itself). */
export async function cancelAsOperator(apiUrl: string, jobId: string): Promise<void> {
  await fetch(`${apiUrl}/v1/operator/jobs/${jobId}/cancel`, {
    method: 'POST',
    headers: jsonHeaders(OPERATOR_TOKEN),
    body: JSON.stringify({ reason: 'benchmark finished' }),
  });
}
