import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queryable } from '../db/pool';

/**
 * The service's Prometheus metrics. Counters count what this API process saw; gauges are read
 * from PostgreSQL at scrape time, so every replica reports the same truth about jobs.
 */
export function createMetrics(db: Queryable) {
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
    name: 'onejob_attempts',
    help: 'Attempts by state (from the database)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const { rows } = await db.query<{ state: string; n: number }>(
        'SELECT state, count(*)::int AS n FROM attempts GROUP BY state',
      );
      this.reset();
      for (const row of rows) this.set({ state: row.state }, row.n);
    },
  });
  new Gauge({
    name: 'onejob_jobs_unknown',
    help: 'Open jobs blocked on an unknown attempt (from the database)',
    registers: [registry],
    async collect() {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(DISTINCT a.job_id)::int AS n FROM attempts a JOIN jobs j ON j.id = a.job_id
          WHERE a.state = 'unknown' AND j.terminal_status IS NULL`,
      );
      this.set(rows[0]?.n ?? 0);
    },
  });
  new Gauge({
    name: 'onejob_race_events',
    help: 'Results that lost the compare-and-swap, all time (from the database)',
    registers: [registry],
    async collect() {
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM race_events');
      this.set(rows[0]?.n ?? 0);
    },
  });

  return { registry, jobsCreated, jobsReplayed, conflicts };
}

export type Metrics = ReturnType<typeof createMetrics>;
