import type { RecentCalls } from '../domain/breaker';
import { HEALING_FAILURE_CODES } from '../domain/retries';
import type { Queryable } from './pool';
import { findProviderHold } from './providerHolds';
import { preparedStatement } from './statements';

/**
 * A provider's bad day as every worker sees it (migration 0012): its cooldown and its breaker.
 * Written only when something goes wrong (a failed call, a probe's end), so a healthy provider's
 * calls add no statement here; read when an attempt is created (createAttempt).
 */
export interface ProviderHealth {
  provider: string;
  cooldownUntil: Date | null;
  breaker: 'closed' | 'open' | 'half_open';
  openedAt: Date | null;
  reason: string | null;
  probeAttemptId: string | null;
  probeStartedAt: Date | null;
}

interface HealthRow {
  provider: string;
  cooldown_until: Date | null;
  breaker: ProviderHealth['breaker'];
  opened_at: Date | null;
  reason: string | null;
  probe_attempt_id: string | null;
  probe_started_at: Date | null;
}

const HEALTH_COLUMNS =
  'provider, cooldown_until, breaker, opened_at, reason, probe_attempt_id, probe_started_at';

const toHealth = (row: HealthRow): ProviderHealth => ({
  provider: row.provider,
  cooldownUntil: row.cooldown_until,
  breaker: row.breaker,
  openedAt: row.opened_at,
  reason: row.reason,
  probeAttemptId: row.probe_attempt_id,
  probeStartedAt: row.probe_started_at,
});

const LIST_HEALTH = preparedStatement(
  'provider-health.list',
  `SELECT ${HEALTH_COLUMNS} FROM provider_health ORDER BY provider`,
);

export async function listProviderHealth(db: Queryable): Promise<ProviderHealth[]> {
  const { rows } = await db.query<HealthRow>(LIST_HEALTH([]));
  return rows.map(toHealth);
}

/** Why no new attempt may go to a provider now, and until when (or when to ask again); none when it may. */
export interface Unavailability {
  provider: string;
  until: Date;
  reason: string;
  /** For the skip counter: `held` (an operator's hold), `cooldown`, `breaker_open` or `breaker_half_open`. */
  cause: 'held' | 'cooldown' | 'breaker_open' | 'breaker_half_open';
}

const UNAVAILABILITY = preparedStatement(
  'provider-health.unavailability',
  `SELECT greatest(CASE WHEN h.cooldown_until > now() THEN h.cooldown_until END,
                   CASE WHEN h.breaker <> 'closed'
                        THEN greatest(h.opened_at, h.probe_started_at) + $2 * interval '1 millisecond' END) AS until,
          CASE WHEN h.breaker = 'open' THEN 'circuit breaker open: ' || coalesce(h.reason, 'failing')
               WHEN h.breaker = 'half_open' THEN 'circuit breaker half-open: a probe attempt is in flight'
               ELSE 'cooling down: the provider asked to wait (Retry-After)' END AS reason,
          CASE WHEN h.breaker = 'open' THEN 'breaker_open'
               WHEN h.breaker = 'half_open' THEN 'breaker_half_open'
               ELSE 'cooldown' END AS cause
     FROM provider_health h
    WHERE h.provider = $1 AND (h.cooldown_until > now() OR h.breaker <> 'closed')`,
);

export async function providerUnavailability(
  db: Queryable,
  provider: string,
  coolOffMs: number,
): Promise<Unavailability | undefined> {
  // An operator's hold comes first: no probe passes it, and its reason is the operator's (who held
  // it is in the audit, not in owners' notes). It has
  // no end of its own: its jobs ask again after the breaker's cool-off, as for an open breaker,
  // so a release reaches them within that (their durable timer).
  const hold = await findProviderHold(db, provider);
  if (hold)
    return {
      provider,
      until: new Date(Date.now() + coolOffMs),
      reason: `held by an operator since ${hold.heldAt.toISOString()}: ${hold.reason}`,
      cause: 'held',
    };
  const { rows } = await db.query<{ until: Date; reason: string; cause: Unavailability['cause'] }>(
    UNAVAILABILITY([provider, coolOffMs]),
  );
  const row = rows[0];
  return row && { provider, until: row.until, reason: row.reason, cause: row.cause };
}

const CLAIM_PROBE = preparedStatement(
  'provider-health.claim-probe',
  `UPDATE provider_health
      SET breaker = 'half_open', probe_attempt_id = $2, probe_started_at = now(), updated_at = now()
    WHERE provider = $1 AND (cooldown_until IS NULL OR cooldown_until <= now())
      AND ((breaker = 'open' AND opened_at + $3 * interval '1 millisecond' <= now())
        -- A probe that never reported back (its worker died, its outcome is unknown) frees the
        -- slot after another cool-off.
        OR (breaker = 'half_open' AND probe_started_at + $3 * interval '1 millisecond' <= now()))
    RETURNING provider`,
);

const RELEASE_PROBE = preparedStatement(
  'provider-health.release-probe',
  `UPDATE provider_health
      SET breaker = 'open', probe_attempt_id = NULL, probe_started_at = NULL, updated_at = now()
    WHERE provider = $1 AND breaker = 'half_open' AND probe_attempt_id = $2`,
);

/** Takes the half-open probe for this attempt once the cool-off is over; false if not now. */
async function claimProbe(
  db: Queryable,
  provider: string,
  attemptId: string,
  coolOffMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(CLAIM_PROBE([provider, attemptId, coolOffMs]));
  return rowCount === 1;
}

/**
 * Makes the attempt as the provider's half-open probe if the probe can be claimed for it now.
 * A probe claimed for an attempt that is not made (its job ended, or its owner's budget refused
 * it) would hold the breaker half-open for a call that never goes: the claim is given back, the
 * breaker is open again, and the next attempt to come is the probe.
 */
export async function asProbe<T>(
  db: Queryable,
  provider: string,
  attemptId: string,
  coolOffMs: number,
  make: () => Promise<T | undefined>,
): Promise<T | undefined> {
  if (!(await claimProbe(db, provider, attemptId, coolOffMs))) return undefined;
  let made: T | undefined;
  try {
    made = await make();
  } catch (error) {
    // Inside a caller's transaction this statement fails too, and the caller's rollback gives
    // the claim back; the refusal is what the caller must see either way.
    await db.query(RELEASE_PROBE([provider, attemptId])).catch(() => undefined);
    throw error;
  }
  if (made === undefined) await db.query(RELEASE_PROBE([provider, attemptId]));
  return made;
}

const COOL_DOWN = preparedStatement(
  'provider-health.cool-down',
  `WITH before AS (SELECT cooldown_until FROM provider_health WHERE provider = $1)
   INSERT INTO provider_health AS h (provider, cooldown_until)
   VALUES ($1, now() + $2 * interval '1 millisecond')
   ON CONFLICT (provider) DO UPDATE
      SET cooldown_until = greatest(coalesce(h.cooldown_until, EXCLUDED.cooldown_until), EXCLUDED.cooldown_until),
          updated_at = now()
   RETURNING h.cooldown_until AS until,
             coalesce((SELECT cooldown_until FROM before) > now(), false) AS already`,
);

/**
 * No new attempt to the provider for `ms` (from a 429's Retry-After), for every job and worker;
 * an earlier, longer cooldown stands. Says until when, and whether one was already running.
 */
export async function coolDown(
  db: Queryable,
  provider: string,
  ms: number,
): Promise<{ until: Date; already: boolean }> {
  const { rows } = await db.query<{ until: Date; already: boolean }>(COOL_DOWN([provider, ms]));
  return rows[0]!;
}

const RECENT_CALLS = preparedStatement(
  'provider-health.recent-calls',
  `WITH ended AS (
     SELECT state = 'failed' AND error->>'code' = ANY($2::text[]) AS counted, call_ended_at
       FROM attempts
      WHERE provider = $1 AND call_ended_at IS NOT NULL AND state IN ('succeeded', 'lost', 'failed')
      ORDER BY call_ended_at DESC
   ),
   latest AS (SELECT counted FROM ended LIMIT $3)
   SELECT (SELECT count(*) FROM latest)::int AS latest,
          (SELECT count(*) FILTER (WHERE counted) FROM latest)::int AS latest_failed,
          (SELECT count(*) FROM ended WHERE call_ended_at > now() - $4 * interval '1 millisecond')::int AS in_window,
          (SELECT count(*) FILTER (WHERE counted) FROM ended
            WHERE call_ended_at > now() - $4 * interval '1 millisecond')::int AS in_window_failed`,
);

/** The provider's latest ended calls, and those in the window, as the breaker counts them. */
export async function recentCalls(
  db: Queryable,
  provider: string,
  latest: number,
  windowMs: number,
): Promise<RecentCalls> {
  const { rows } = await db.query<{
    latest: number;
    latest_failed: number;
    in_window: number;
    in_window_failed: number;
  }>(RECENT_CALLS([provider, HEALING_FAILURE_CODES, latest, windowMs]));
  const row = rows[0]!;
  return {
    latest: row.latest,
    latestFailed: row.latest_failed,
    inWindow: row.in_window,
    inWindowFailed: row.in_window_failed,
  };
}

const OPEN_BREAKER = preparedStatement(
  'provider-health.open',
  `INSERT INTO provider_health AS h (provider, breaker, opened_at, reason)
   VALUES ($1, 'open', now(), $2)
   ON CONFLICT (provider) DO UPDATE
      SET breaker = 'open', opened_at = now(), reason = $2,
          probe_attempt_id = NULL, probe_started_at = NULL, updated_at = now()
    WHERE h.breaker = 'closed'
   RETURNING h.opened_at`,
);

/** Opens a closed breaker; true when this call opened it (so it is logged once). */
export async function openBreaker(db: Queryable, provider: string, reason: string) {
  const { rowCount } = await db.query(OPEN_BREAKER([provider, reason]));
  return rowCount === 1;
}

const END_PROBE = preparedStatement(
  'provider-health.end-probe',
  `UPDATE provider_health
      SET breaker = CASE WHEN $3 THEN 'closed' ELSE 'open' END,
          opened_at = CASE WHEN $3 THEN opened_at ELSE now() END,
          reason = CASE WHEN $3 THEN NULL ELSE $4 END,
          probe_attempt_id = NULL, probe_started_at = NULL, updated_at = now()
    WHERE provider = $1 AND probe_attempt_id = $2
    RETURNING breaker`,
);

/**
 * The probe's call ended: healthy closes the breaker, a counted failure opens it again. Says what
 * the breaker became, or nothing when this attempt no longer holds the probe.
 */
export async function endProbe(
  db: Queryable,
  provider: string,
  attemptId: string,
  healthy: boolean,
  reason: string,
): Promise<ProviderHealth['breaker'] | undefined> {
  const { rows } = await db.query<{ breaker: ProviderHealth['breaker'] }>(
    END_PROBE([provider, attemptId, healthy, reason]),
  );
  return rows[0]?.breaker;
}

const RECENT_ACTIVITY = preparedStatement(
  'provider-health.recent-activity',
  `SELECT a.provider,
          count(*) FILTER (WHERE a.state = 'failed' AND a.call_ended_at > now() - $1 * interval '1 millisecond')::int AS failures,
          count(*) FILTER (WHERE a.created_at > now() - $1 * interval '1 millisecond'
                             AND EXISTS (SELECT 1 FROM attempts p
                                          WHERE p.job_id = a.job_id AND p.seq = a.seq - 1
                                            AND p.provider = a.provider AND p.state = 'failed'))::int AS retries
     FROM attempts a
    WHERE a.created_at > now() - $1 * interval '1 millisecond'
       OR a.call_ended_at > now() - $1 * interval '1 millisecond'
    GROUP BY a.provider`,
);

/** Each provider's failed calls and retries (an attempt after its own failed one) lately. */
export async function recentProviderActivity(
  db: Queryable,
  windowMs: number,
): Promise<Map<string, { failures: number; retries: number }>> {
  const { rows } = await db.query<{ provider: string; failures: number; retries: number }>(
    RECENT_ACTIVITY([windowMs]),
  );
  return new Map(rows.map((r) => [r.provider, { failures: r.failures, retries: r.retries }]));
}
