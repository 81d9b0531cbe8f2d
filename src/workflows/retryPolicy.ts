/**
 * When a failed attempt of an exclusive job is tried again on its provider, as pure functions:
 * the retry table's answer bound by the job's cap and plan, and the rules that came after runs
 * were recorded (asked only where they change the decision, so a patch can answer them).
 */
import {
  consecutiveTries,
  DEFAULT_RETRY,
  describeFailure,
  failureCause,
  formatSeconds,
  LATE_WINDOW_EXCEEDED,
  NEVER_SENT,
  retryDelayMs,
  retryFitsCap,
  retryVerdict,
  type FailedCall,
} from '../domain/retries';
import type { AttemptSummary, JobPlan, LastFailure, PlannedProvider } from './definitions';

/** A retry on the same provider, decided after its attempt failed: the wait, and why in words. */
export interface PlannedRetry {
  provider: PlannedProvider;
  delayMs: number;
  /** The try on this provider it will be (2 for the first retry). */
  nextTry: number;
  /** `retrying pay in 2 s (429, Retry-After 2)`: what the job's details say while it waits. */
  description: string;
  /** The failure retried, as the retries counter labels it: `429`, `unreachable`. */
  cause: string;
}

/**
 * Rules of the retry table that came after runs were recorded: each is asked only where it
 * changes the decision, so the workflow can answer by a patch (a recorded run replays the rule
 * it ran with).
 */
export interface RetryRuleChanges {
  /** A retry leaves the cap room for each untried provider of the plan (before: any room). */
  retryLeavesRoomForFallbacks(): boolean;
  /** An attempt whose call never began is retried (before: the plan moved on). */
  neverSentIsRetried(): boolean;
  /** A call cut off at its late-result window is retried like a timeout (before: moved on). */
  lateWindowIsRetried(): boolean;
}

/** Every rule in force: for callers outside a workflow, and runs recorded with them all. */
export const CURRENT_RETRY_RULES: RetryRuleChanges = {
  retryLeavesRoomForFallbacks: () => true,
  neverSentIsRetried: () => true,
  lateWindowIsRetried: () => true,
};

/**
 * Whether the attempt that just failed is tried again on its provider: the retry table says its
 * failure may heal, the provider has retries and some left, and the job has attempts left beyond
 * one for each provider of the plan not yet tried (a fallback is never starved by retries).
 * Exclusive jobs only: a hedged job's answer to a failure is its next provider, at once (a retry
 * beside the hedges it already started would multiply them).
 */
export function retryAfterFailure(
  plan: JobPlan,
  attempts: readonly AttemptSummary[],
  failed: AttemptSummary,
  failure: FailedCall | undefined,
  random: () => number,
  rules: RetryRuleChanges = CURRENT_RETRY_RULES,
): PlannedRetry | undefined {
  // planted-bug site (tools/chaos/plantedBugs.ts): retries-off
  if (plan.mode !== 'exclusive' || failed.state !== 'failed' || !failure) return undefined;
  const provider = plan.compatible.find((p) => p.name === failed.provider);
  if (!provider || provider.uncertified) return undefined;
  // A call that never began did not try the provider: it is tried again whatever the
  // provider's own retries (with their waits, or the table's defaults), bound by the job's cap.
  const neverSent = failure.code === NEVER_SENT && rules.neverSentIsRetried();
  if (failure.code === NEVER_SENT && !neverSent) return undefined;
  if (failure.code === LATE_WINDOW_EXCEEDED && !rules.lateWindowIsRetried()) return undefined;
  const settings = provider.retry ?? (neverSent ? DEFAULT_RETRY : undefined);
  if (!settings) return undefined;
  const untried = plan.providers.filter((p) => !attempts.some((a) => a.provider === p.name));
  if (attempts.length >= plan.maxAttempts) return undefined;
  if (
    !retryFitsCap(attempts.length, untried.length, plan.maxAttempts) &&
    rules.retryLeavesRoomForFallbacks()
  )
    return undefined;
  const tries = consecutiveTries(attempts, provider.name);
  if (!neverSent && (tries >= settings.maxAttempts || !retryVerdict(failure).retry))
    return undefined;
  const delayMs = retryDelayMs(settings, failure, tries + 1, random);
  return {
    provider,
    delayMs,
    nextTry: tries + 1,
    cause: failureCause(failure),
    description: `retrying ${provider.name} in ${formatSeconds(delayMs)} s (${describeFailure(failure)})`,
  };
}

/**
 * The retry of the job's last attempt, decided by the run that takes the job up as its closed
 * run would have (retryAfterFailure), and made when that run had planned to, if it noted it (at
 * once if that time has passed). An attempt its admission found never sent is tried again so.
 */
export function resumedRetry(
  plan: JobPlan,
  attempts: readonly AttemptSummary[],
  last: LastFailure,
  random: () => number,
  now: number,
  rules: RetryRuleChanges = CURRENT_RETRY_RULES,
): (PlannedRetry & { noted?: true }) | undefined {
  const failed = attempts.at(-1);
  if (!failed || failed.attemptId !== last.attemptId) return undefined;
  const retry = retryAfterFailure(plan, attempts, failed, last.failure, random, rules);
  if (!retry || last.retryAt === undefined) return retry;
  return { ...retry, delayMs: Math.max(1, Date.parse(last.retryAt) - now), noted: true };
}
