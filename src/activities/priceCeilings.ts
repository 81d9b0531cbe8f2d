import type { JobRecord } from '../db/jobs';
import type { Queryable } from '../db/pool';
import { ceilingsFor } from '../db/priceCeilings';
import { formatMoney, type Money } from '../domain/cost';
import type { AnyJobTypeContract } from '../jobTypes';
import { worstCaseOfCall } from '../providers/pricing';
import { localPromptTokens } from '../providers/promptTokens';
import type { ProviderRegistry } from '../providers/registry';

/** A provider the price ceiling keeps out of a job's failover, and what it would have cost. */
export interface PricedOut {
  reason: string;
  /** What was avoided, for the job's note: the two worst cases and their multiple. */
  avoided: { worstCase: Money; primaryWorstCase: Money; multiple: number; ceiling: number } | null;
}

/**
 * Which providers may not be a fallback or a hedge of this job because they may cost more than
 * the ceiling's multiple of its primary (each ceiling over the owner and job type holds: the
 * strictest multiple). Compared on the job's own input, counted here (no call to a count
 * endpoint: the ratio of two estimates of one prompt is what matters). A provider whose price
 * cannot be compared (none, or in another currency) is kept out too. The primary never is.
 */
export async function pricedOut(
  providers: ProviderRegistry,
  db: Queryable,
  job: JobRecord,
  contract: AnyJobTypeContract,
  names: readonly string[],
): Promise<Map<string, PricedOut>> {
  const out = new Map<string, PricedOut>();
  const multiples = (await ceilingsFor(db, job.ownerId, job.type))
    .map((ceiling) => ceiling.maxMultiple)
    .filter((multiple): multiple is number => multiple !== null);
  const [primaryName] = job.providers;
  if (multiples.length === 0 || !primaryName) return out;
  const ceiling = Math.min(...multiples);
  const worstOf = (name: string): Money | undefined => {
    const provider = providers.get(name);
    // An HTTP provider has no prompt: its worst case is its maxCostPerCall.
    const { tokens } = localPromptTokens(provider, contract, job.input);
    return worstCaseOfCall(provider.config, tokens);
  };
  const primary = worstOf(primaryName);
  for (const name of names) {
    if (name === primaryName) continue;
    const worstCase = worstOf(name);
    if (!primary || !worstCase || primary.currency !== worstCase.currency) {
      out.set(name, {
        reason: `its price cannot be compared with the primary's (a price is missing, or in another currency) under a price ceiling of ${ceiling}×`,
        avoided: null,
      });
      continue;
    }
    const multiple = primary.amount > 0 ? worstCase.amount / primary.amount : Infinity;
    if (multiple <= ceiling) continue;
    out.set(name, {
      reason: `it may cost ${formatMoney(worstCase.amount, worstCase.currency)}, ${multiple.toFixed(1)}× the primary's ${formatMoney(primary.amount, primary.currency)}, above the price ceiling of ${ceiling}×`,
      avoided: { worstCase, primaryWorstCase: primary, multiple, ceiling },
    });
  }
  return out;
}
