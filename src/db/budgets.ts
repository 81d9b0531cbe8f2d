import type { BudgetPeriod, BudgetScope, BudgetView } from '../domain/budgets';
import { inTransaction, type Pool, type Queryable } from './pool';
import { preparedStatement } from './statements';

// A budget with its current period's figures (none reserved or spent yet: zeros).
const BUDGET_VIEW_COLUMNS = `b.owner_id, b.job_type, b.period, b.currency, b.amount::float8 AS amount,
  b.set_by, b.reason, b.set_at, budget_period_start(b.period, now()) AS period_start,
  coalesce(p.reserved, 0)::float8 AS reserved, coalesce(p.spent, 0)::float8 AS spent,
  (SELECT count(*)::int FROM budget_reservations r
    WHERE r.budget_id = b.id AND r.period_start = budget_period_start(b.period, now())
      AND r.settled_cost IS NULL) AS holding`;

interface BudgetViewRow {
  owner_id: string;
  job_type: string | null;
  period: BudgetPeriod;
  currency: string;
  amount: number;
  set_by: string;
  reason: string;
  set_at: Date;
  period_start: Date;
  reserved: number;
  spent: number;
  holding: number;
}

function toView(row: BudgetViewRow): BudgetView {
  return {
    ownerId: row.owner_id,
    jobType: row.job_type,
    period: row.period,
    currency: row.currency,
    amount: row.amount,
    setBy: row.set_by,
    reason: row.reason,
    setAt: row.set_at.toISOString(),
    periodStart: row.period_start.toISOString(),
    reserved: row.reserved,
    spent: row.spent,
    left: Math.max(0, row.amount - row.reserved - row.spent),
    attemptsHolding: row.holding,
  };
}

const OWNER_BUDGETS = preparedStatement(
  'budgets.of-owner',
  `SELECT ${BUDGET_VIEW_COLUMNS}
     FROM budgets b
     LEFT JOIN budget_periods p
       ON p.budget_id = b.id AND p.period_start = budget_period_start(b.period, now())
    WHERE b.owner_id = $1
    ORDER BY b.job_type NULLS FIRST, b.period`,
);

/** An owner's budgets, each with what its current period has reserved and spent. */
export async function budgetsOfOwner(db: Queryable, ownerId: string): Promise<BudgetView[]> {
  const { rows } = await db.query<BudgetViewRow>(OWNER_BUDGETS([ownerId]));
  return rows.map(toView);
}

const ALL_BUDGETS = preparedStatement(
  'budgets.all',
  `SELECT ${BUDGET_VIEW_COLUMNS}
     FROM budgets b
     LEFT JOIN budget_periods p
       ON p.budget_id = b.id AND p.period_start = budget_period_start(b.period, now())
    ORDER BY b.owner_id, b.job_type NULLS FIRST, b.period`,
);

/** Every owner's budgets, for operators. */
export async function allBudgets(db: Queryable): Promise<BudgetView[]> {
  const { rows } = await db.query<BudgetViewRow>(ALL_BUDGETS([]));
  return rows.map(toView);
}

const FIND_SCOPE = preparedStatement(
  'budgets.find-scope',
  `SELECT id, currency, amount::float8 AS amount, set_by, reason FROM budgets
    WHERE owner_id = $1 AND coalesce(job_type, '') = coalesce($2::text, '') AND period = $3
    FOR UPDATE`,
);
const INSERT_BUDGET = preparedStatement(
  'budgets.insert',
  `INSERT INTO budgets (owner_id, job_type, period, currency, amount, set_by, reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
);
const UPDATE_BUDGET = preparedStatement(
  'budgets.update',
  `UPDATE budgets SET currency = $2, amount = $3, set_by = $4, reason = $5, set_at = now()
    WHERE id = $1`,
);
const DELETE_BUDGET = preparedStatement('budgets.delete', 'DELETE FROM budgets WHERE id = $1');
const AUDIT_CHANGE = preparedStatement(
  'budgets.audit-change',
  `INSERT INTO budget_changes (owner_id, job_type, period, before, after, changed_by, reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
);

type Figures = { currency: string; amount: number } | null;

/** Whether a budget in another currency may replace one that already counts reservations. */
export class BudgetCurrencyChange extends Error {}

/**
 * Sets (or, with `figures` null, removes) the budget of one scope, and audits the change in the
 * same transaction. A budget's currency is kept while its scope exists: the reservations it holds
 * are in it. Returns whether anything changed.
 */
export async function changeBudget(
  pool: Pool,
  scope: BudgetScope,
  figures: Figures,
  by: { actor: string; reason: string },
): Promise<boolean> {
  return inTransaction(pool, async (tx) => {
    const { ownerId, jobType, period } = scope;
    const { rows } = await tx.query<{ id: string; currency: string; amount: number }>(
      FIND_SCOPE([ownerId, jobType, period]),
    );
    const before = rows[0];
    if (!before && !figures) return false;
    if (before && figures && before.currency !== figures.currency)
      throw new BudgetCurrencyChange(
        `the budget is in ${before.currency}: remove it before setting one in ${figures.currency}`,
      );
    if (before && figures && before.amount === figures.amount) return false;
    if (!before && figures)
      await tx.query(
        INSERT_BUDGET([
          ownerId,
          jobType,
          period,
          figures.currency,
          figures.amount,
          by.actor,
          by.reason,
        ]),
      );
    else if (before && figures)
      await tx.query(
        UPDATE_BUDGET([before.id, figures.currency, figures.amount, by.actor, by.reason]),
      );
    else if (before) await tx.query(DELETE_BUDGET([before.id]));
    const was = before ? { currency: before.currency, amount: before.amount } : null;
    await tx.query(AUDIT_CHANGE([ownerId, jobType, period, was, figures, by.actor, by.reason]));
    return true;
  });
}

const CHANGES = preparedStatement(
  'budgets.changes',
  `SELECT owner_id, job_type, period, before, after, changed_by, reason, changed_at
     FROM budget_changes WHERE owner_id = $1 ORDER BY id DESC LIMIT 100`,
);

/** The last changes made to an owner's budgets, newest first. */
export async function budgetChanges(db: Queryable, ownerId: string) {
  const { rows } = await db.query<{
    owner_id: string;
    job_type: string | null;
    period: BudgetPeriod;
    before: Figures;
    after: Figures;
    changed_by: string;
    reason: string;
    changed_at: Date;
  }>(CHANGES([ownerId]));
  return rows.map((row) => ({
    jobType: row.job_type,
    period: row.period,
    before: row.before,
    after: row.after,
    changedBy: row.changed_by,
    reason: row.reason,
    changedAt: row.changed_at.toISOString(),
  }));
}
