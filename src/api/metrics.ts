import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queryable } from '../db/pool';

/** Read at every scrape: both walk the partial index of in-flight attempts, never whole tables. */
export const ATTEMPTS_IN_FLIGHT_SQL = `
  SELECT state, count(*)::int AS n FROM attempts
   WHERE state IN ('starting', 'running', 'unknown') GROUP BY state`;
export const JOBS_UNKNOWN_SQL = `
  SELECT count(DISTINCT a.job_id)::int AS n FROM attempts a JOIN jobs j ON j.id = a.job_id
   WHERE a.state = 'unknown' AND j.terminal_status IS NULL`;

/**
 * A value read from the database at most once per `ttlMs`, however often it is scraped, and
 * by one query at a time.
 */
function cached<T>(read: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let value: { at: number; data: T } | undefined;
  let reading: Promise<T> | undefined;
  return async () => {
    if (value && Date.now() - value.at < ttlMs) return value.data;
    reading ??= read()
      .then((data) => {
        value = { at: Date.now(), data };
        return data;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
}

/**
 * The service's Prometheus metrics. Counters count what this API process saw. Gauges are read
 * from PostgreSQL, so every replica reports the same truth about jobs: what is in flight from
 * small partial indexes at every scrape, whole-table totals at most every `cacheMs`.
 */
export function createMetrics(
  db: Queryable,
  options: { waitsInProgress: () => number; cacheMs?: number },
) {
  // How long a whole-table count may be reused before it is read again.
  const tableCountTtlMs = options.cacheMs ?? 15_000;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'onejob_api_' });

  const jobsCreated = new Counter({
    name: 'onejob_jobs_created_total',
    help: 'Jobs created (201)',
    labelNames: ['type'],
    registers: [registry],
  });
  const jobsReplayed = new Counter({
    name: 'onejob_jobs_replayed_total',
    help: 'Creates answered with the existing job (200)',
    labelNames: ['type'],
    registers: [registry],
  });
  const conflicts = new Counter({
    name: 'onejob_idempotency_conflicts_total',
    help: 'Same key, different intent (409)',
    registers: [registry],
  });
  new Gauge({
    name: 'onejob_api_waits_in_progress',
    help: 'GET /v1/jobs/:id?wait= requests this process holds open',
    registers: [registry],
    collect() {
      this.set(options.waitsInProgress());
    },
  });

  const attemptsByState = cached(async () => {
    const { rows } = await db.query<{ state: string; n: number }>(
      'SELECT state, count(*)::int AS n FROM attempts GROUP BY state',
    );
    return rows;
  }, tableCountTtlMs);
  const raceCount = cached(async () => {
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM race_events');
    return rows[0]?.n ?? 0;
  }, tableCountTtlMs);

  new Gauge({
    name: 'onejob_attempts',
    help: 'Attempts by state, all time (from the database, cached briefly)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const rows = await attemptsByState();
      this.reset();
      for (const row of rows) this.set({ state: row.state }, row.n);
    },
  });
  new Gauge({
    name: 'onejob_attempts_in_flight',
    help: 'Attempts that may still take effect, by state (from the database)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const { rows } = await db.query<{ state: string; n: number }>(ATTEMPTS_IN_FLIGHT_SQL);
      this.reset();
      for (const state of ['starting', 'running', 'unknown'])
        this.set({ state }, rows.find((row) => row.state === state)?.n ?? 0);
    },
  });
  new Gauge({
    name: 'onejob_jobs_unknown',
    help: 'Open jobs blocked on an unknown attempt (from the database)',
    registers: [registry],
    async collect() {
      const { rows } = await db.query<{ n: number }>(JOBS_UNKNOWN_SQL);
      this.set(rows[0]?.n ?? 0);
    },
  });
  new Gauge({
    name: 'onejob_race_events',
    help: 'Results that lost the compare-and-swap, all time (from the database, cached briefly)',
    registers: [registry],
    async collect() {
      this.set(await raceCount());
    },
  });

  return { registry, jobsCreated, jobsReplayed, conflicts };
}

export type Metrics = ReturnType<typeof createMetrics>;
