/** The metrics of webhooks: deliveries by state, the backlog's age, tries, fan-out, held endpoints. */
import { Gauge } from 'prom-client';
import type { Queryable } from '../db/pool';
import { oldestPendingDeliverySeconds, webhookEndpointsHeld } from '../db/webhookMetrics';
import { DELIVERY_STATES } from '../domain/webhooks';
import type { MetricsRegistry } from './histograms';
import type { LedgerCounter, Totals } from './metricTotals';

/** Registers them in `registry`, read from `db` at each scrape. */
export function addWebhookMetrics(
  registry: MetricsRegistry,
  db: Queryable,
  totals: Totals,
  ledgerCounter: LedgerCounter,
): void {
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
    'onejob_webhook_redeliveries_total',
    'Events sent again to an endpoint on request, by who asked: owner, operator (from the database)',
    ['by'],
    'webhook_redeliveries',
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
}
