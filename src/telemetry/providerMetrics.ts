/** The metrics of providers: retries and skips, each one's hold, breaker, cooldown and eligibility. */
import { Gauge } from 'prom-client';
import type { Queryable } from '../db/pool';
import { listDecertifications } from '../db/providerEligibility';
import { listProviderHealth } from '../db/providerHealth';
import { listProviderHolds } from '../db/providerHolds';
import type { MetricsRegistry } from './histograms';
import type { LedgerCounter } from './metricTotals';

/** The breaker gauge's values. */
const BREAKER_GAUGE = { closed: 0, half_open: 1, open: 2 } as const;

/** Registers them in `registry`, read from `db` at each scrape. */
export function addProviderMetrics(
  registry: MetricsRegistry,
  db: Queryable,
  ledgerCounter: LedgerCounter,
): void {
  ledgerCounter(
    'onejob_provider_retries_total',
    'Retries on the same provider, by provider and the failure retried (429, 503, unreachable, …) (from the database)',
    ['provider', 'cause'],
    'provider_retries',
  );
  ledgerCounter(
    'onejob_provider_skips_total',
    'Times a plan passed a provider by, by provider and reason: held, cooldown, breaker_open, breaker_half_open (from the database)',
    ['provider', 'reason'],
    'provider_skips',
  );
  // Continuous certification (docs/providers.md): losses and regains, and what is lost now.
  ledgerCounter(
    'onejob_provider_eligibility_changes_total',
    'Changes of a provider’s fallback and hedge eligibility, by provider and change: lost (its rejection rate), regained (a passing certification) (from the database)',
    ['provider', 'change'],
    'provider_eligibility_changes',
  );
  new Gauge({
    name: 'onejob_provider_decertified',
    help: 'Providers that lost fallback and hedge eligibility for a job type’s contract: 1 while lost (from the database; others are absent)',
    labelNames: ['provider', 'job_type', 'contract_version'],
    registers: [registry],
    async collect() {
      const rows = await listDecertifications(db);
      this.reset();
      for (const row of rows)
        this.set(
          { provider: row.provider, job_type: row.jobType, contract_version: row.contractVersion },
          1,
        );
    },
  });
  // Operators' holds (docs/operators.md): each hold and release, and what is held now.
  ledgerCounter(
    'onejob_provider_hold_changes_total',
    'Operators’ holds and releases of providers, by provider and change: held, released (from the database)',
    ['provider', 'change'],
    'provider_hold_changes',
  );
  new Gauge({
    name: 'onejob_provider_held',
    help: 'Providers an operator holds: 1 while held (from the database; others are absent)',
    labelNames: ['provider'],
    registers: [registry],
    async collect() {
      const rows = await listProviderHolds(db);
      this.reset();
      for (const row of rows) this.set({ provider: row.provider }, 1);
    },
  });
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
}
