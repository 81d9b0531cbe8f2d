import { findJob } from '../db/jobs';
import type { Money } from '../domain/cost';
import { findJobType } from '../jobTypes';
import { worstCaseOfCall } from '../providers/pricing';
import { countPromptTokens } from '../providers/promptTokens';
import type { ActivityDeps } from './types';

/**
 * A local count is an estimate, which may fall short of what the provider bills: it is reserved
 * half again over. A count by the provider's own endpoint is what the call then bills.
 */
const ESTIMATE_MARGIN = 1.5;

/**
 * What an attempt of this job on this provider may cost at most, which it reserves in its owner's
 * budget; or why that cannot be known (then the attempt is not made under a budget).
 */
export async function worstCaseOfAttempt(
  deps: Pick<ActivityDeps, 'pool' | 'providers'>,
  jobId: string,
  providerName: string,
): Promise<{ worstCase: Money } | { unknown: string }> {
  if (!deps.providers.has(providerName))
    return { unknown: `this worker has no provider ${providerName}` };
  const provider = deps.providers.get(providerName);
  const { config } = provider;
  if (config.kind === 'http') {
    const worstCase = worstCaseOfCall(config, null);
    return worstCase
      ? { worstCase }
      : { unknown: `provider ${providerName} has no maxCostPerCall in its config` };
  }
  if (!config.price) return { unknown: `provider ${providerName} has no price in its config` };
  const job = await findJob(deps.pool, jobId);
  const contract = job && findJobType(job.type);
  if (!job || !contract) return { unknown: `job ${jobId} has no job type this worker knows` };
  const count = await countPromptTokens(provider, { contract, input: job.input });
  if (count.tokens === null) return { unknown: `the prompt's tokens could not be counted` };
  const tokens = count.estimate ? Math.ceil(count.tokens * ESTIMATE_MARGIN) : count.tokens;
  const worstCase = worstCaseOfCall(config, tokens);
  return worstCase ? { worstCase } : { unknown: `provider ${providerName} has no price` };
}
