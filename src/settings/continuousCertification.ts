/** Continuous certification's settings (ONEJOB_DECERTIFY_*), read by the worker. */
import { DEFAULT_REJECTION_RULE, type RejectionRule } from '../domain/rejectionRate';
import { milliseconds, positiveInteger } from './read';

function share(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < min || value >= 1)
    throw new Error(`${name} must be a number from ${min} to below 1, got "${raw}"`);
  return value;
}

/**
 * When a provider loses its fallback and hedge eligibility for a job type: the Wilson lower
 * bound of its rejection rate over the window passes the threshold. ONEJOB_DECERTIFY_THRESHOLD
 * `off` turns the rule off.
 */
export function rejectionRule(env: NodeJS.ProcessEnv): RejectionRule {
  const off = env.ONEJOB_DECERTIFY_THRESHOLD === 'off';
  return {
    ...(off
      ? {}
      : {
          threshold: share(env, 'ONEJOB_DECERTIFY_THRESHOLD', DEFAULT_REJECTION_RULE.threshold, 0),
        }),
    confidence: share(
      env,
      'ONEJOB_DECERTIFY_CONFIDENCE',
      DEFAULT_REJECTION_RULE.confidence,
      0.5000001,
    ),
    windowCalls: positiveInteger(
      env,
      'ONEJOB_DECERTIFY_WINDOW_CALLS',
      DEFAULT_REJECTION_RULE.windowCalls,
    ),
    windowMs: positiveInteger(env, 'ONEJOB_DECERTIFY_WINDOW_MS', DEFAULT_REJECTION_RULE.windowMs),
    minCalls: positiveInteger(env, 'ONEJOB_DECERTIFY_MIN_CALLS', DEFAULT_REJECTION_RULE.minCalls),
  };
}

/**
 * How long a job whose later fallback or hedge lost its eligibility passes it by before it asks
 * again; asked again with nothing else left in its plan, the job fails `no-certified-provider`
 * (a re-certification meanwhile lets it go on).
 */
export function decertifiedRecheckMs(env: NodeJS.ProcessEnv): number {
  return milliseconds(env, 'ONEJOB_DECERTIFIED_RECHECK_MS', 1_000);
}
