import { Counter, Gauge, collectDefaultMetrics } from 'prom-client';
import {
  attemptsInFlight,
  foldMetricDeltas,
  jobsWithUnknownAttempts,
  oldestUnknownAttemptSeconds,
  metricTotals,
} from '../db/metricCounts';
import type { Queryable } from '../db/pool';
import { listProviderHealth } from '../db/providerHealth';
import { oldestPendingDeliverySeconds, webhookEndpointsHeld } from '../db/webhookMetrics';
import { DELIVERY_STATES } from '../domain/webhooks';
import { httpRequestHistogram, jobDurationHistogram, metricsRegistry } from './histograms';

/** A read that callers arriving while it runs share, instead of each starting their own. */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let reading: Promise<T> | undefined;
  return () =>
    (reading ??= read().finally(() => {
      reading = undefined;
    }));
}

/** The breaker gauge's values. */
const BREAKER_GAUGE = { closed: 0, half_open: 1, open: 2 } as const;

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

  new Gauge({
    name: 'onejob_attempts',
    help: 'Attempts by state, all time (from the database)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const rows = await totals();
      this.reset();
      for (const row of rows) if (row.metric === 'attempts') this.set({ state: row.label }, row.n);
    },
  });
  new Gauge({
    name: 'onejob_attempts_in_flight',
    help: 'Attempts that may still take effect, by state (from the database)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const rows = await attemptsInFlight(db);
      this.reset();
      for (const state of ['starting', 'running', 'unknown'])
        this.set({ state }, rows.find((row) => row.state === state)?.n ?? 0);
    },
  });
  new Gauge({
    name: 'onejob_jobs_unknown',
    // A cancelled job whose charge is unknown still may have moved money: it counts until
    // that attempt settles.
    help: 'Jobs with an unknown attempt, open or ended (from the database)',
    registers: [registry],
    async collect() {
      this.set(await jobsWithUnknownAttempts(db));
    },
  });
  new Gauge({
    name: 'onejob_unknown_attempt_oldest_seconds',
    // What an alert on blocked jobs wants: not how many, but whether one has waited too long.
    help: 'How long the oldest attempt still unknown has been unknown; 0 when none is (from the database)',
    registers: [registry],
    async collect() {
      this.set(await oldestUnknownAttemptSeconds(db));
    },
  });
  new Gauge({
    name: 'onejob_race_events',
    help: 'Results that lost the compare-and-swap, all time (from the database)',
    registers: [registry],
    async collect() {
      const rows = await totals();
      this.set(rows.find((row) => row.metric === 'race_events')?.n ?? 0);
    },
  });

  /**
   * A counter of one all-time total the call-end trigger keeps (migration 0008): its label
   * values are the delta's label split at '|', its value the total divided by `unitsPerValue`.
   */
  const ledgerCounter = (
    name: string,
    help: string,
    labelNames: string[],
    metric: string,
    unitsPerValue = 1,
  ) =>
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const rows = (await totals()).filter((row) => row.metric === metric);
        this.reset();
        for (const row of rows) {
          const values = row.label.split('|');
          const labels = Object.fromEntries(labelNames.map((label, i) => [label, values[i]!]));
          this.inc(labels, row.n / unitsPerValue);
        }
      },
    });
  ledgerCounter(
    'onejob_attempt_cost_total',
    'What provider calls cost, by provider, what the call came to (won, lost, rejected, failed) and currency; calls of unknown cost are not in it (from the database)',
    ['provider', 'outcome', 'currency'],
    'attempt_cost_nanos',
    1e9,
  );
  ledgerCounter(
    'onejob_attempt_calls_unpriced_total',
    'Provider calls whose cost is unknown (no usage reported, or no price configured), by provider and outcome (from the database)',
    ['provider', 'outcome'],
    'attempt_calls_unpriced',
  );
  ledgerCounter(
    'onejob_sweep_failures_total',
    'Jobs the sweeper could not handle (logged; the sweep went on), by pass: start or restart (from the database)',
    ['pass'],
    'sweep_failures',
  );
  ledgerCounter(
    'onejob_attempt_tokens_total',
    'Tokens providers reported, by provider and kind (input, cached_input, output); cached input is part of input (from the database)',
    ['provider', 'kind'],
    'attempt_tokens',
  );

  ledgerCounter(
    'onejob_provider_retries_total',
    'Retries on the same provider, by provider and the failure retried (429, 503, unreachable, …) (from the database)',
    ['provider', 'cause'],
    'provider_retries',
  );
  ledgerCounter(
    'onejob_provider_skips_total',
    'Times a plan passed a provider by, by provider and reason: cooldown, breaker_open, breaker_half_open (from the database)',
    ['provider', 'reason'],
    'provider_skips',
  );
  new Gauge({
    name: 'onejob_provider_breaker_state',
    help: 'Each provider’s circuit breaker: 0 closed, 1 half-open, 2 open (from the database; providers never unwell are absent)',
    labelNames: ['provider'],
    registers: [registry],
    async collect() {
      const rows = await listProviderHealth(db);
      this.reset();
      for (const row of rows) this.set({ provider: row.provider }, BREAKER_GAUGE[row.breaker]);
    },
  });
  new Gauge({
    name: 'onejob_provider_cooldown_seconds',
    help: 'How long each provider still cools down (its Retry-After), 0 when it does not (from the database)',
    labelNames: ['provider'],
    registers: [registry],
    async collect() {
      const rows = await listProviderHealth(db);
      const now = Date.now();
      this.reset();
      for (const row of rows)
        this.set(
          { provider: row.provider },
          Math.max(0, ((row.cooldownUntil?.getTime() ?? now) - now) / 1000),
        );
    },
  });

  // Webhooks (issue 55, N11): counts the triggers of migration 0024 keep, and two reads of an
  // index each. Per-endpoint breaker state is read on the endpoint lists, not here: a label per
  // endpoint would grow without bound.
  new Gauge({
    name: 'onejob_webhook_deliveries',
    help: 'Webhook deliveries by state, now: pending is the backlog still to send (from the database)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const rows = (await totals()).filter((row) => row.metric === 'webhook_deliveries');
      this.reset();
      for (const state of DELIVERY_STATES)
        this.set({ state }, rows.find((row) => row.label === state)?.n ?? 0);
    },
  });
  new Gauge({
    name: 'onejob_webhook_oldest_pending_seconds',
    help: 'How long the oldest webhook delivery still pending has waited; 0 when none does (from the database)',
    registers: [registry],
    async collect() {
      this.set(await oldestPendingDeliverySeconds(db));
    },
  });
  ledgerCounter(
    'onejob_webhook_tries_total',
    'Webhook tries by outcome: delivered (2xx), refused (another status), no_answer (no status: timeout, connection or name failure), gone (410) (from the database)',
    ['outcome'],
    'webhook_tries',
  );
  ledgerCounter(
    'onejob_webhook_deliveries_written_total',
    'Webhook deliveries written, one per event and endpoint; divided by onejob_webhook_events_written_total, the fan-out (from the database)',
    [],
    'webhook_deliveries_written',
  );
  ledgerCounter(
    'onejob_webhook_events_written_total',
    'Job events that wrote webhook deliveries (from the database)',
    [],
    'webhook_events_written',
  );
  new Gauge({
    name: 'onejob_webhook_endpoints_held',
    help: 'Live webhook endpoints whose breaker holds them now: nothing is sent to them until the hold ends (from the database)',
    registers: [registry],
    async collect() {
      this.set(await webhookEndpointsHeld(db));
    },
  });

  const httpRequestSeconds = httpRequestHistogram(registry);
  const jobSeconds = jobDurationHistogram(registry);

  return { registry, jobsCreated, jobsReplayed, conflicts, httpRequestSeconds, jobSeconds, fold };
}

export type Metrics = ReturnType<typeof createMetrics>;
