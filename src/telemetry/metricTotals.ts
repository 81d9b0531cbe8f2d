/**
 * The all-time totals that triggers keep (metric_totals, migration 0005), as the metrics read
 * them: one read shared by the scrape's collectors, and counters made of one total each.
 */
import { Counter } from 'prom-client';
import type { MetricTotal } from '../db/metricCounts';
import type { MetricsRegistry } from './histograms';

/** A read that callers arriving while it runs share, instead of each starting their own. */
export function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let reading: Promise<T> | undefined;
  return () =>
    (reading ??= read().finally(() => {
      reading = undefined;
    }));
}

/** The totals as of this scrape (folded first), read once however many collectors ask. */
export type Totals = () => Promise<MetricTotal[]>;

/** Makes counters of the totals in `registry`. */
export function ledgerCounters(registry: MetricsRegistry, totals: Totals) {
  /**
   * A counter of one all-time total the call-end trigger keeps (migration 0008): its label
   * values are the delta's label split at '|', its value the total divided by `unitsPerValue`.
   */
  return (name: string, help: string, labelNames: string[], metric: string, unitsPerValue = 1) =>
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
}

/** Makes one counter of a total (see ledgerCounters). */
export type LedgerCounter = ReturnType<typeof ledgerCounters>;
