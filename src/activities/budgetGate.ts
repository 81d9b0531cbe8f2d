import { createAttempt, type AttemptRecord } from '../db/attempts';
import { WorstCaseNeeded } from '../db/budgetGate';
import { addJobNote } from '../db/jobs';
import type { BudgetRefusal } from '../domain/budgets';
import { Refusal } from '../domain/failures';
import { endJobWithoutResult } from '../service/results';
import type { ActivityDeps } from './types';
import { worstCaseOfAttempt } from './worstCase';

type GateDeps = Pick<ActivityDeps, 'pool' | 'providers' | 'metrics' | 'logger'>;

/**
 * Creates the attempt (createAttempt), reserving its worst case in its owner's budgets when the
 * owner has any: the database asks for the worst case (WorstCaseNeeded) only then, so an owner
 * without a budget pays for no count. A worst case that cannot be known is no call.
 */
export async function createWithinBudget(
  deps: GateDeps,
  input: Parameters<typeof createAttempt>[1],
): Promise<AttemptRecord> {
  try {
    return await createAttempt(deps.pool, input);
  } catch (error) {
    if (!(error instanceof WorstCaseNeeded)) throw error;
    const worst = await worstCaseOfAttempt(deps, input.jobId, input.provider);
    const budget = error.budget;
    if ('unknown' in worst)
      throw new Refusal('budgetExceeded', `no call under the owner's budget: ${worst.unknown}`, {
        provider: input.provider,
        budget,
      });
    try {
      return await createAttempt(deps.pool, { ...input, worstCase: worst.worstCase });
    } catch (again) {
      if (!(again instanceof WorstCaseNeeded)) throw again;
      throw new Refusal(
        'budgetExceeded',
        `no call under the owner's budget: provider ${input.provider} is priced in ${worst.worstCase.currency}, the budget is in ${String(again.budget.currency)}`,
        { provider: input.provider, budget: again.budget },
      );
    }
  }
}

/** How long a hedge passed by for the budget waits before it is asked again. */
const BUDGET_RECHECK_MS = 1_000;

/**
 * An attempt the budget refused: the job says so, and then either ends, failed with the
 * reason (`budget-exceeded`), when none of its attempts is in flight; or, while one is (the
 * refused one was a hedge), it goes on without it: the plan passes the provider by, and asks
 * again once nothing else is left (the attempt in flight may settle below its worst case).
 */
export async function refusedByBudget(
  deps: GateDeps,
  jobId: string,
  refusal: Refusal<'budgetExceeded'>,
): Promise<Refusal> {
  const { provider, budget } = refusal.details;
  const note: BudgetRefusal = {
    event: 'budget_exceeded',
    provider,
    reason: refusal.message,
    ...(budget.worstCase !== undefined
      ? { worstCase: { amount: Number(budget.worstCase), currency: String(budget.currency) } }
      : {}),
    budget,
  };
  await addJobNote(deps.pool, jobId, note);
  const failure = { code: 'budget-exceeded', message: refusal.message, provider, budget };
  const job = await endJobWithoutResult(deps, jobId, 'failed', failure, true);
  if (job.terminalStatus)
    return new Refusal('jobNotOpen', `job ${jobId} is ${job.terminalStatus}: ${refusal.message}`, {
      terminalStatus: job.terminalStatus,
      completedBy: job.completedBy,
    });
  deps.logger.info({ jobId, provider }, "an attempt was passed by for its owner's budget");
  const until = new Date(Date.now() + BUDGET_RECHECK_MS);
  return new Refusal(
    'providerUnavailable',
    refusal.message,
    { provider, reason: refusal.message, until: until.toISOString(), retryAfterSeconds: 1 },
    'budget',
  );
}
