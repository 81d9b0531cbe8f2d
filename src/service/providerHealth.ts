import type { AttemptRecord } from '../db/attempts';
import type { Queryable } from '../db/pool';
import { coolDown, endProbe, openBreaker, recentCalls } from '../db/providerHealth';
import { breakerOpens, breakerSettings, MAX_COOLDOWN_MS } from '../domain/breaker';
import type { AttemptState } from '../domain/job';
import { HEALING_FAILURE_CODES } from '../domain/retries';
import type { Logger } from '../logger';
import type { ProviderConfig } from '../providers/provider';

/** What a provider call came to, as the provider's health counts it. */
export interface CallEnd {
  attempt: Pick<AttemptRecord, 'id' | 'breakerProbe'>;
  /** The attempt's state once the call's end was recorded. */
  state: AttemptState;
  /** The call's failure, when it failed: its code and the provider's Retry-After. */
  failure?: { code: string; retryAfterMs?: number };
}

/**
 * After a provider call has ended and been recorded: a 429 with Retry-After cools the provider
 * down for everyone; a failure that says the provider is unwell may open its breaker; a probe's
 * end closes or re-opens it. Each change of state is logged once, by the call that made it. A
 * healthy call that was no probe writes nothing here.
 */
export async function noteCallEnd(
  db: Queryable,
  logger: Logger,
  config: ProviderConfig,
  end: CallEnd,
): Promise<void> {
  const provider = config.name;
  const log = logger.child({ provider, attemptId: end.attempt.id });
  const { failure } = end;
  if (failure?.code === 'http_429' && failure.retryAfterMs !== undefined) {
    const cooling = await coolDown(db, provider, Math.min(failure.retryAfterMs, MAX_COOLDOWN_MS));
    if (!cooling.already)
      log.warn(
        { event: 'provider_cooldown', until: cooling.until.toISOString() },
        'provider cooling down: it asked to wait (Retry-After); no new attempt goes to it until then',
      );
  }
  const settings = breakerSettings(config.breaker);
  if (!settings) return;
  // Unknown outcomes count as neither (the call may still have worked).
  if (end.state === 'unknown' || end.state === 'running' || end.state === 'starting') return;
  const counted =
    end.state === 'failed' && failure !== undefined && HEALING_FAILURE_CODES.includes(failure.code);
  if (end.attempt.breakerProbe) {
    const reason = `the probe attempt ${end.attempt.id} failed (${failure?.code ?? 'failure'})`;
    const now = await endProbe(db, provider, end.attempt.id, !counted, reason);
    if (now === 'closed')
      log.info(
        { event: 'provider_breaker_closed' },
        'provider circuit breaker closed: the probe was answered',
      );
    else if (now === 'open')
      log.warn(
        { event: 'provider_breaker_opened', reason },
        'provider circuit breaker opened again',
      );
    return;
  }
  if (!counted) return;
  const reason = breakerOpens(
    await recentCalls(db, provider, settings.consecutiveFailures, settings.windowMs),
    settings,
  );
  if (reason && (await openBreaker(db, provider, reason)))
    log.warn(
      { event: 'provider_breaker_opened', reason, coolOffMs: settings.coolOffMs },
      'provider circuit breaker opened: plans skip it until a probe is answered',
    );
}
