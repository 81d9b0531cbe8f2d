import { budgetRefusalReason, jobCeilingReason } from '../domain/budgets';
import { Refusal } from '../domain/failures';

/**
 * The owner has a budget, and the attempt came without a worst case (or with one in another
 * currency) to reserve in it: the caller works it out and asks again.
 */
export class WorstCaseNeeded extends Error {
  constructor(
    readonly attemptId: string,
    readonly budget: Record<string, unknown>,
  ) {
    super(
      `attempt ${attemptId} needs a worst case in ${String(budget.currency)} for its owner's budget`,
    );
    this.name = 'WorstCaseNeeded';
  }
}

/**
 * What the budget gate (migration 0026's trigger on a new attempt) refusing an attempt means
 * here: a worst case is needed, or the attempt does not fit its owner's budget or its job's
 * ceiling (`budgetExceeded`, with the gate's figures). Undefined for any other error.
 */
export function budgetGateRefusal(
  error: unknown,
  attemptId: string,
  provider: string,
): WorstCaseNeeded | Refusal<'budgetExceeded'> | undefined {
  const pgError = error as { code?: string; constraint?: string; detail?: string };
  if (pgError.code !== '23514') return undefined;
  const detail = () => JSON.parse(pgError.detail ?? '{}') as Record<string, unknown>;
  if (pgError.constraint === 'attempts_budget_needs_worst_case')
    return new WorstCaseNeeded(attemptId, detail());
  if (pgError.constraint === 'attempts_within_job_ceiling') {
    const ceiling = detail();
    return new Refusal('budgetExceeded', jobCeilingReason(provider, ceiling), {
      provider,
      budget: ceiling,
    });
  }
  if (pgError.constraint !== 'attempts_within_budget') return undefined;
  const budget = detail();
  return new Refusal('budgetExceeded', budgetRefusalReason(provider, budget), {
    provider,
    budget,
  });
}
