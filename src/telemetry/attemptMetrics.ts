/** The metrics of attempts and jobs: in flight, unknown, lost races, and what calls cost. */
import { Gauge } from 'prom-client';
import {
  attemptsInFlight,
  jobsWithUnknownAttempts,
  oldestUnknownAttemptSeconds,
} from '../db/metricCounts';
import type { Queryable } from '../db/pool';
import type { MetricsRegistry } from './histograms';
import type { LedgerCounter, Totals } from './metricTotals';

/** Registers them in `registry`, read from `db` at each scrape. */
export function addAttemptMetrics(
  registry: MetricsRegistry,
  db: Queryable,
  totals: Totals,
  ledgerCounter: LedgerCounter,
): void {
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
}
