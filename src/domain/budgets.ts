/** Owners' budgets: their scope, what a view of one says, and an attempt's worst case. */

export const BUDGET_PERIODS = ['day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** What one budget covers: an owner's jobs (of one type, or of every type) per UTC day or month. */
export interface BudgetScope {
  ownerId: string;
  /** Null: every job type. */
  jobType: string | null;
  period: BudgetPeriod;
}

/** A budget and its current period, as owners and operators read it. */
export interface BudgetView extends BudgetScope {
  currency: string;
  amount: number;
  setBy: string;
  reason: string;
  setAt: string;
  /** The start of the current period (UTC). */
  periodStart: string;
  /** Worst cases of the attempts that may still bill: in flight, or unknown. */
  reserved: number;
  /** What settled attempts cost (at their worst case when their cost is unknown). */
  spent: number;
  /** What a new attempt's worst case may be at most now. */
  left: number;
  /** Attempts whose reservation still holds. */
  attemptsHolding: number;
}

/** The note a job gets when an attempt did not fit its owner's budget. */
export interface BudgetRefusal extends Record<string, unknown> {
  event: 'budget_exceeded';
  provider: string;
  /** What the attempt could have cost at most, when it was known. */
  worstCase?: { amount: number; currency: string };
  reason: string;
  budget?: Record<string, unknown>;
}

/** How a budget refusal reads, from the gate's figures. */
export function budgetRefusalReason(provider: string, budget: Record<string, unknown>): string {
  const scope = budget.jobType ? `${String(budget.jobType)} jobs` : 'jobs';
  return (
    `the owner's ${String(budget.period)} budget for ${scope} (${String(budget.currency)} ${String(budget.amount)}: ` +
    `${String(budget.spent)} spent, ${String(budget.reserved)} reserved) has no room for an attempt on ${provider} ` +
    `that may cost up to ${String(budget.currency)} ${String(budget.worstCase)}`
  );
}

/** How a job ceiling's refusal reads, from the gate's figures. */
export function jobCeilingReason(provider: string, ceiling: Record<string, unknown>): string {
  return (
    `the job may cost at most ${String(ceiling.currency)} ${String(ceiling.maxJobCost)} ` +
    `(its attempts count for ${String(ceiling.counted)}): no room for an attempt on ${provider} ` +
    `that may cost up to ${String(ceiling.currency)} ${String(ceiling.worstCase)}`
  );
}

/** One price ceiling: per owner and job type (null: every one). */
export interface PriceCeiling {
  ownerId: string | null;
  jobType: string | null;
  /** The most one job may cost, with its currency. */
  maxJobCost: { amount: number; currency: string } | null;
  /** The most a fallback or hedge may cost, as a multiple of the job's primary. */
  maxMultiple: number | null;
  setBy: string;
  reason: string;
}
