import { Counter, Gauge, collectDefaultMetrics } from 'prom-client';
import { foldMetricDeltas, metricTotals } from '../db/metricCounts';
import type { Queryable } from '../db/pool';
import { addAdmissionMetrics } from './admissionMetrics';
import { addAttemptMetrics } from './attemptMetrics';
import { addBudgetMetrics } from './budgetMetrics';
import { httpRequestHistogram, jobDurationHistogram, metricsRegistry } from './histograms';
import { ledgerCounters, shared } from './metricTotals';
import { addProviderMetrics } from './providerMetrics';
import { addWebhookMetrics } from './webhookMetrics';

/**
 * The service's Prometheus metrics. Counters count what this API process saw. Gauges are read
 * from PostgreSQL, so every replica reports the same truth about jobs, and no scrape reads a
 * whole table: what is in flight comes from small partial indexes, all-time totals from
 * metric_totals, which triggers keep (migration 0005).
 */
export function createMetrics(db: Queryable, options: { waitsInProgress: () => number }) {
  const registry = metricsRegistry();
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

  /** Folds what changed since the last fold into the totals. */
  const fold = (): Promise<void> => foldMetricDeltas(db);
  const totals = shared(async () => {
    await fold();
    return metricTotals(db);
  });
  const ledgerCounter = ledgerCounters(registry, totals);

  addAttemptMetrics(registry, db, totals, ledgerCounter);
  addProviderMetrics(registry, db, ledgerCounter);
  addBudgetMetrics(registry, db);
  addAdmissionMetrics(registry, db);
  addWebhookMetrics(registry, db, totals, ledgerCounter);

  const httpRequestSeconds = httpRequestHistogram(registry);
  const jobSeconds = jobDurationHistogram(registry);

  return { registry, jobsCreated, jobsReplayed, conflicts, httpRequestSeconds, jobSeconds, fold };
}

export type Metrics = ReturnType<typeof createMetrics>;
