/** Budgets on /metrics: how much of each budget's current period is spent or reserved. */
import { Gauge } from 'prom-client';
import { allBudgets } from '../db/budgets';
import type { Queryable } from '../db/pool';
import type { MetricsRegistry } from './histograms';

/** Registers the gauge in `registry`, read from `db` at each scrape. */
export function addBudgetMetrics(registry: MetricsRegistry, db: Queryable): void {
  new Gauge({
    name: 'onejob_budget_used_ratio',
    help: 'Each budget’s current period: (spent + reserved) / amount, 1 when spent (from the database; owners without a budget are absent)',
    labelNames: ['owner', 'job_type', 'period'],
    registers: [registry],
    async collect() {
      const budgets = await allBudgets(db);
      this.reset();
      for (const budget of budgets)
        this.set(
          { owner: budget.ownerId, job_type: budget.jobType ?? '', period: budget.period },
          budget.amount > 0 ? (budget.spent + budget.reserved) / budget.amount : 1,
        );
    },
  });
}
