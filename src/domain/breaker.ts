/**
 * The circuit breaker of a provider, shared by every worker through PostgreSQL
 * (provider_health): after `consecutiveFailures` failures in a row, or `failureRate` of at least
 * `minimumCalls` calls within `windowMs`, the provider is open and the plans of new attempts skip
 * it; after `coolOffMs` one probe attempt is let through (half-open), and its end closes the
 * breaker or opens it again. What counts as a failure is the retry table's: failures that say the
 * provider is unwell (retries.ts, HEALING_FAILURE_CODES). Unknown outcomes count as neither, and
 * nothing here touches the reconciliation of attempts already made.
 */
export interface BreakerSettings {
  consecutiveFailures: number;
  failureRate: number;
  minimumCalls: number;
  windowMs: number;
  coolOffMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  consecutiveFailures: 5,
  failureRate: 0.5,
  minimumCalls: 100,
  windowMs: 60_000,
  coolOffMs: 30_000,
};

/** A provider's settings from its config: `false` turns its breaker off. */
export function breakerSettings(
  configured: Partial<BreakerSettings> | false | undefined,
): BreakerSettings | false {
  if (configured === false) return false;
  return { ...DEFAULT_BREAKER, ...configured };
}

/** What the provider's latest ended calls were, as the breaker counts them. */
export interface RecentCalls {
  /** Its latest `consecutiveFailures` ended calls (fewer when it has had fewer)… */
  latest: number;
  /** …and how many of those were failures that count. */
  latestFailed: number;
  /** Its ended calls within the window, and the failures among them. */
  inWindow: number;
  inWindowFailed: number;
}

/** Whether the breaker opens, and why in words; undefined when it stays closed. */
export function breakerOpens(calls: RecentCalls, settings: BreakerSettings): string | undefined {
  if (calls.latest >= settings.consecutiveFailures && calls.latestFailed === calls.latest)
    return `${calls.latest} failures in a row`;
  if (
    calls.inWindow >= settings.minimumCalls &&
    calls.inWindowFailed / calls.inWindow >= settings.failureRate
  )
    return `${calls.inWindowFailed} of ${calls.inWindow} calls failed within ${Math.round(settings.windowMs / 1000)} s`;
  return undefined;
}

/** The longest cooldown a provider's Retry-After can impose on everyone: 10 minutes. */
export const MAX_COOLDOWN_MS = 600_000;
