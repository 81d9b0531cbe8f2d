import { budgetsOfOwner } from '../db/budgets';
import { findJobByKey } from '../db/jobs';
import type { Pool } from '../db/pool';
import type { BudgetView } from '../domain/budgets';
import { ServiceError } from './errors';

/** How long one API process reuses its read of an owner's budgets for the create check. */
const CREATE_CHECK_REUSE_MS = 1_000;
const reads = new Map<string, { until: number; budgets: Promise<BudgetView[]> }>();

function ownerBudgets(pool: Pool, ownerId: string): Promise<BudgetView[]> {
  const now = Date.now();
  const cached = reads.get(ownerId);
  if (cached && cached.until > now) return cached.budgets;
  const budgets = budgetsOfOwner(pool, ownerId);
  budgets.catch(() => reads.delete(ownerId));
  reads.set(ownerId, { until: now + CREATE_CHECK_REUSE_MS, budgets });
  // The map forgets owners that stopped creating: at most one entry per owner seen lately.
  if (reads.size > 10_000)
    for (const [owner, entry] of reads) if (entry.until <= now) reads.delete(owner);
  return budgets;
}

/**
 * A new job whose owner's budget for its type has nothing left is refused at create
 * (`budget-exceeded`, 402, `x-should-retry: false`) and nothing is recorded; a replay of a key
 * already used still answers its job. The binding check is the attempt's own reservation
 * (migration 0026): this one only spares the client a job that could only fail, and reads
 * budgets at most once a second per owner and process.
 */
export async function refuseCreateOverBudget(
  pool: Pool,
  request: { ownerId: string; idempotencyKey: string; type: string },
): Promise<void> {
  const spent = (await ownerBudgets(pool, request.ownerId)).find(
    (budget) => (budget.jobType === null || budget.jobType === request.type) && budget.left <= 0,
  );
  if (!spent) return;
  if (await findJobByKey(pool, request.ownerId, request.idempotencyKey)) return;
  const scope = spent.jobType ? `${spent.jobType} jobs` : 'jobs';
  throw new ServiceError(
    'budget-exceeded',
    `the ${spent.period} budget for your ${scope} (${spent.currency} ${spent.amount}) is spent or reserved until ${nextPeriod(spent)}; no job was recorded`,
    {
      budget: {
        jobType: spent.jobType,
        period: spent.period,
        currency: spent.currency,
        amount: spent.amount,
        reserved: spent.reserved,
        spent: spent.spent,
        periodStart: spent.periodStart,
        nextPeriodStart: nextPeriod(spent),
      },
    },
  );
}

/** When the budget's next period starts (UTC). */
function nextPeriod(budget: BudgetView): string {
  const start = new Date(budget.periodStart);
  const next =
    budget.period === 'day'
      ? Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1)
      : Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
  return new Date(next).toISOString();
}
