import { hedgeSpendInWindow, meanHedgeCost } from '../db/hedgeSpend';
import { formatMoney } from '../domain/cost';
import type { ActivityDeps, HedgeBudget } from './types';

/**
 * Why a hedged job runs exclusive: the note admission writes on the job. The budget holds per
 * owner and primary provider, measured over that owner's jobs only; its figures stay under
 * `service`, which operators see and owners never do (see ownerView in
 * src/service/jobDocument.ts), so an owner's note shows no figure at all.
 */
export interface HedgingPaused extends Record<string, unknown> {
  event: 'hedging_paused';
  /** What the job's owner is told: no figure of anyone else's. */
  reason: string;
  primary: string;
  hedge?: string;
  /** The service-wide reason and figures, for operators. */
  service: Record<string, unknown> & { reason: string };
}

const BUDGET_SPENT =
  "hedging is paused by the service's hedging budget: this job runs one provider at a time";
const OVER_CAP =
  "a hedge is expected to cost more than the service's cap per job: this job runs one provider at a time";

const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;

/** Whether hedging's budget allows a new hedged job to hedge: a note saying why not, or nothing. */
async function budgetVerdict(
  pool: ActivityDeps['pool'],
  budget: HedgeBudget,
  ownerId: string,
  primary: string,
  hedge: string | undefined,
): Promise<HedgingPaused | undefined> {
  const window = `the last ${seconds(budget.windowMs)}`;
  if (budget.share !== undefined) {
    const spend = await hedgeSpendInWindow(pool, ownerId, primary, budget.windowMs);
    const unknown = spend.reduce((sum, row) => sum + row.extraUnknown, 0);
    const priced = spend.filter(
      (row): row is typeof row & { currency: string } => row.currency !== null,
    );
    // Later calls of unknown cost (a timeout, an error without usage) are counted at the mean
    // of the known ones; with nothing to go by, the budget cannot be shown to hold.
    const byMean = priced.filter((row) => row.extraKnown > 0);
    if (unknown > 0 && byMean.length !== 1)
      return {
        event: 'hedging_paused',
        reason: BUDGET_SPENT,
        primary,
        service: {
          owner: ownerId,
          reason: `${unknown} hedge call(s) of jobs with primary ${primary} over ${window} have no known cost, and no known hedge cost in one currency to estimate them by`,
          unknownHedgeCalls: unknown,
        },
      };
    for (const row of priced) {
      const estimated = row.extraKnown > 0 ? (unknown * row.extraCost) / row.extraKnown : 0;
      const extraCost = row.extraCost + estimated;
      if (extraCost <= budget.share * row.primaryCost) continue;
      return {
        event: 'hedging_paused',
        reason: BUDGET_SPENT,
        primary,
        service: {
          owner: ownerId,
          reason: `hedges of jobs with primary ${primary} cost ${formatMoney(extraCost, row.currency)} over ${window}${unknown > 0 ? ` (${unknown} of unknown cost counted at the mean)` : ''}, more than ${budget.share * 100} % of their primaries' ${formatMoney(row.primaryCost, row.currency)}`,
          currency: row.currency,
          primaryCost: row.primaryCost,
          extraCost,
          ...(unknown > 0 ? { unknownHedgeCalls: unknown } : {}),
          share: budget.share,
          windowMs: budget.windowMs,
        },
      };
    }
  }
  if (budget.maxExtraPerJob !== undefined && hedge) {
    const means = await meanHedgeCost(pool, ownerId, hedge, budget.windowMs);
    for (const { currency, mean, calls } of means) {
      if (mean <= budget.maxExtraPerJob) continue;
      return {
        event: 'hedging_paused',
        reason: OVER_CAP,
        primary,
        hedge,
        service: {
          owner: ownerId,
          reason: `a hedge on ${hedge} cost ${formatMoney(mean, currency)} on average over ${window} (${calls} calls), more than the cap of ${formatMoney(budget.maxExtraPerJob, currency)} a job may spend on hedging`,
          currency,
          meanHedgeCost: mean,
          maxExtraPerJob: budget.maxExtraPerJob,
        },
      };
    }
  }
  return undefined;
}

/**
 * Hedging's budget as admission asks it, per (owner, primary, hedge provider). A verdict is reused for
 * `refreshMs`: the window's sums read every hedged call that ended in it, too much to read for
 * every job. Without a budget, hedging is never paused.
 */
export function hedgeBudgetGuard(deps: Pick<ActivityDeps, 'pool' | 'hedgeBudget'>) {
  const budget = deps.hedgeBudget;
  const verdicts = new Map<
    string,
    { until: number; verdict: Promise<HedgingPaused | undefined> }
  >();
  return (
    ownerId: string,
    primary: string,
    hedge: string | undefined,
  ): Promise<HedgingPaused | undefined> => {
    if (!budget) return Promise.resolve(undefined);
    const key = `${ownerId}\n${primary}\n${hedge ?? ''}`;
    const now = Date.now();
    const cached = verdicts.get(key);
    if (cached && cached.until > now) return cached.verdict;
    const verdict = budgetVerdict(deps.pool, budget, ownerId, primary, hedge);
    // A failed read is not kept: the next job asks again (unless a newer read replaced it).
    verdict.catch(() => {
      if (verdicts.get(key)?.verdict === verdict) verdicts.delete(key);
    });
    verdicts.set(key, { until: now + budget.refreshMs, verdict });
    return verdict;
  };
}
