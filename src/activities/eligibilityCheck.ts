/**
 * Continuous certification's check, run by the worker when a call's answer broke its contract
 * (the ledger's `rejected`): only a rejection can raise the rate, so only one needs a look. The
 * look reads one provider's latest answered calls of one job type (an index scan, bounded by
 * the window), and writes a loss only when the rule says so (src/domain/rejectionRate.ts).
 */
import { hostname } from 'node:os';
import { decertify, recentAnswers } from '../db/providerEligibility';
import { judgeWindow } from '../domain/rejectionRate';
import { contractVersion, type AnyJobTypeContract } from '../jobTypes';
import type { Logger } from '../logger';
import { providerModel, type Provider } from '../providers/provider';
import type { ActivityDeps } from './types';

/** Who decides, as the kept record names it: this check, on this worker. */
const DECIDED_BY = `rejection-rate check (worker ${hostname()}:${process.pid})`;

/**
 * Looks at the provider's rejection rate for the job type's contract after a rejected call;
 * says whether this look took its fallback and hedge eligibility away.
 */
export async function checkRejectionRate(
  deps: Pick<ActivityDeps, 'pool' | 'rejectionRule'>,
  call: { attemptId: string; provider: Provider; contract: AnyJobTypeContract; log: Logger },
): Promise<boolean> {
  const rule = deps.rejectionRule;
  if (rule?.threshold === undefined) return false;
  const { config } = call.provider;
  const key = {
    provider: config.name,
    model: providerModel(config),
    jobType: call.contract.name,
    contractVersion: contractVersion(call.contract),
  };
  const window = await recentAnswers(deps.pool, key, rule);
  // Not certified (nothing to lose), or lost already.
  if (!window) return false;
  const { lost, lowerBound } = judgeWindow(rule, window);
  if (!lost) return false;
  const wrote = await decertify(deps.pool, {
    ...key,
    certifiedAt: window.certifiedAt,
    decidedBy: DECIDED_BY,
    attemptId: call.attemptId,
    calls: window.calls,
    rejected: window.rejected,
    lowerBound,
    threshold: rule.threshold,
    confidence: rule.confidence,
    windowCalls: rule.windowCalls,
    windowMs: rule.windowMs,
  });
  if (wrote)
    call.log.warn(
      { ...key, calls: window.calls, rejected: window.rejected, lowerBound },
      'provider lost its fallback and hedge eligibility: too many answers broke the contract',
    );
  return wrote;
}
