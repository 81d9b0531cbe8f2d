import type { Pool } from '../../src/db/pool';
import { doesWork } from '../../tools/simulator/faults';
import type { LedgerEntry, RequestRecord } from '../../tools/simulator/ledger';
import type { Fate, ModelJob } from './protocolModel';

/**
 * The model-based test's second and third witnesses: besides what the API shows (which a double
 * charge can leave exactly as the model predicts), what the provider saw and did, from the
 * simulator's request log and ledger, and what the database holds, the job's row and its
 * attempts' rows. Each is compared with the model after every step.
 */

/** Fates in which the provider does the work once the request is let go. */
const WORKS: ReadonlySet<Fate> = new Set<Fate>(['answers', 'fails-after-work', 'drops-after-work']);

/** Per provider key of the job: requests that reached the provider, and times it did the work. */
export type ProviderView = Record<string, { requests: number; executions: number }>;

/**
 * What the provider must have seen of the model's job: each attempt's call sent once (the model's
 * providers run without retries, and a status lookup is a route of its own), and done once its
 * request was let go with a fate that works; nothing under any other key of the job.
 */
export function expectedProviderView(jobId: string, job: ModelJob): ProviderView {
  return Object.fromEntries(
    job.attempts.map((a) => [
      `${jobId}:${a.seq}`,
      { requests: 1, executions: !a.held && WORKS.has(a.fate) ? 1 : 0 },
    ]),
  );
}

/**
 * What the simulator saw of a job: requests on the routes that do the work (its status lookups
 * left out), and the work its ledger records, by key.
 */
export function providerView(
  jobId: string,
  requests: readonly Pick<RequestRecord, 'route' | 'idempotencyKey'>[],
  ledger: readonly Pick<LedgerEntry, 'route' | 'idempotencyKey' | 'executions'>[],
): ProviderView {
  const view: ProviderView = {};
  const ofJob = (key: string) => key.startsWith(`${jobId}:`);
  const slot = (key: string) => (view[key] ??= { requests: 0, executions: 0 });
  for (const r of requests)
    if (doesWork(r.route) && ofJob(r.idempotencyKey)) slot(r.idempotencyKey).requests += 1;
  for (const e of ledger)
    if (ofJob(e.idempotencyKey)) slot(e.idempotencyKey).executions += e.executions;
  return view;
}

/** How the provider's view differs from the model's, key by key, or nothing. */
export function providerDifference(seen: ProviderView, expected: ProviderView): string | undefined {
  const keys = [...new Set([...Object.keys(seen), ...Object.keys(expected)])].sort();
  const differ = keys.filter(
    (key) => JSON.stringify(seen[key] ?? null) !== JSON.stringify(expected[key] ?? null),
  );
  if (differ.length === 0) return undefined;
  const show = (v: ProviderView[string] | undefined) =>
    v ? `${v.requests} request(s), done ${v.executions} time(s)` : 'nothing';
  return differ
    .map(
      (key) => `${key}: the provider saw ${show(seen[key])}, the model says ${show(expected[key])}`,
    )
    .join('; ');
}

/** A job as its rows hold it, in the terms of the model's picture. */
export interface RowsView {
  terminal: string | null;
  completedBy: string | null;
  attempts: Array<{ seq: number; provider: string; state: string }>;
}

export async function rowsView(pool: Pool, jobId: string): Promise<RowsView> {
  const [job, attempts] = await Promise.all([
    pool.query<{ terminal_status: string | null; completed_by: string | null }>(
      'SELECT terminal_status, completed_by FROM jobs WHERE id = $1',
      [jobId],
    ),
    pool.query<{ seq: number; provider: string; state: string }>(
      'SELECT seq, provider, state FROM attempts WHERE job_id = $1 ORDER BY seq',
      [jobId],
    ),
  ]);
  return {
    terminal: job.rows[0]?.terminal_status ?? null,
    completedBy: job.rows[0]?.completed_by ?? null,
    attempts: attempts.rows,
  };
}

/** The rows the model's job must leave. */
export function expectedRows(jobId: string, job: ModelJob): RowsView {
  return {
    terminal: job.terminal,
    completedBy: job.winner === null ? null : `${jobId}:${job.winner}`,
    attempts: job.attempts.map(({ seq, provider, state }) => ({ seq, provider, state })),
  };
}
