/**
 * An owner's webhook endpoints: registering, listing, finding, deleting and enabling them,
 * rotating their secrets, and each one's breaker as its owner and operators read it.
 */
import { isUuid } from '../domain/identity';
import type { SecretKeyRing } from '../domain/secretSealing';
import type { WebhookEvent } from '../domain/webhooks';
import { inTransaction, type Pool, type Queryable } from './pool';
import { insertSealedSecret } from './webhookSecrets';

/** An owner's webhook endpoint, as its owner sees it (never with its secrets). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

interface EndpointRow {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
}

const ENDPOINT_COLUMNS = 'id, url, events, description, disabled_at, disabled_reason, created_at';

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
  };
}

/**
 * An endpoint's breaker (migration 0023) as its owner and operators read it. closed: tries go
 * as events come (`failuresInARow` may already count toward opening it); open: nothing is sent
 * before `heldUntil`; half_open: the hold is over and the next try is a probe.
 */
export interface EndpointBreaker {
  state: 'closed' | 'open' | 'half_open';
  failuresInARow: number;
  heldUntil: Date | null;
  reason: string | null;
}

export interface BreakerRow {
  breaker_state: EndpointBreaker['state'];
  breaker_failures: number;
  breaker_held_until: Date | null;
  breaker_reason: string | null;
}

/** The breaker columns of an endpoint row (`webhook_endpoints`) joined with BREAKER_JOIN. */
export const BREAKER_COLUMNS = `
  CASE WHEN h.held_until IS NULL THEN 'closed' WHEN h.held_until > now() THEN 'open'
       ELSE 'half_open' END AS breaker_state,
  coalesce(h.failures, 0) AS breaker_failures, h.held_until AS breaker_held_until,
  h.held_reason AS breaker_reason`;
export const BREAKER_JOIN =
  'LEFT JOIN webhook_endpoint_health h ON h.endpoint_id = webhook_endpoints.id';

export function toBreaker(row: BreakerRow): EndpointBreaker {
  return {
    state: row.breaker_state,
    failuresInARow: row.breaker_failures,
    heldUntil: row.breaker_held_until,
    reason: row.breaker_reason,
  };
}

/** An endpoint as its owner reads it in the lists: with its breaker. */
export type WebhookEndpointWithBreaker = WebhookEndpoint & { breaker: EndpointBreaker };

function toEndpointWithBreaker(row: EndpointRow & BreakerRow): WebhookEndpointWithBreaker {
  return { ...toEndpoint(row), breaker: toBreaker(row) };
}

/**
 * Registers an endpoint with its first secret, in one transaction, unless its owner has
 * `maxEndpoints` live ones already (then undefined). Under the owner's lock: two replicas'
 * registrations cannot both see room for the last one.
 */
export async function insertEndpoint(
  pool: Pool,
  ownerId: string,
  endpoint: { url: string; events: readonly WebhookEvent[]; description?: string },
  secret: string,
  maxEndpoints: number,
  /** Seals `secret` at rest. */
  keys: SecretKeyRing,
): Promise<WebhookEndpoint | undefined> {
  return inTransaction(pool, async (client) => {
    await client.query(
      `SELECT pg_advisory_xact_lock(hashtextextended('onejob.webhook-endpoints:' || $1, 0))`,
      [ownerId],
    );
    const live = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM webhook_endpoints WHERE owner_id = $1 AND deleted_at IS NULL LIMIT $2
       ) counted`,
      [ownerId, maxEndpoints],
    );
    if (live.rows[0]!.n >= maxEndpoints) return undefined;
    const { rows } = await client.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (owner_id, url, events, description)
       VALUES ($1, $2, $3, $4) RETURNING ${ENDPOINT_COLUMNS}`,
      [ownerId, endpoint.url, endpoint.events, endpoint.description ?? null],
    );
    const created = toEndpoint(rows[0]!);
    await insertSealedSecret(client, keys, created.id, secret);
    return created;
  });
}

/** Where a page of endpoints starts: after this one (created at, then id). */
export interface EndpointPageCursor {
  createdAtMicros: number;
  id: string;
}

/** A page of an owner's endpoints, oldest first, and where the next starts (if there is one). */
export async function listEndpoints(
  db: Queryable,
  ownerId: string,
  page: { limit: number; after?: EndpointPageCursor },
): Promise<{ endpoints: WebhookEndpointWithBreaker[]; next?: EndpointPageCursor }> {
  const { rows } = await db.query<EndpointRow & BreakerRow & { created_at_micros: string }>(
    `SELECT ${ENDPOINT_COLUMNS}, ${BREAKER_COLUMNS},
            (extract(epoch FROM created_at) * 1000000)::bigint AS created_at_micros
       FROM webhook_endpoints ${BREAKER_JOIN}
      WHERE owner_id = $1 AND deleted_at IS NULL
        AND ($3::bigint IS NULL
             OR ((extract(epoch FROM created_at) * 1000000)::bigint, id) > ($3::bigint, $4::uuid))
      ORDER BY created_at, id
      LIMIT $2`,
    [ownerId, page.limit + 1, page.after?.createdAtMicros ?? null, page.after?.id ?? null],
  );
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1);
  return {
    endpoints: kept.map(toEndpointWithBreaker),
    ...(rows.length > page.limit && last
      ? { next: { createdAtMicros: Number(last.created_at_micros), id: last.id } }
      : {}),
  };
}

export async function findEndpoint(
  db: Queryable,
  ownerId: string,
  endpointId: string,
): Promise<WebhookEndpointWithBreaker | undefined> {
  if (!isUuid(endpointId)) return undefined;
  const { rows } = await db.query<EndpointRow & BreakerRow>(
    `SELECT ${ENDPOINT_COLUMNS}, ${BREAKER_COLUMNS} FROM webhook_endpoints ${BREAKER_JOIN}
      WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL`,
    [endpointId, ownerId],
  );
  return rows[0] && toEndpointWithBreaker(rows[0]);
}

/**
 * Deletes an endpoint: nothing more is sent to it, and what was waiting is abandoned. The row
 * stays, so the deliveries recorded on jobs keep naming it. False when there was none.
 */
export async function deleteEndpoint(
  pool: Pool,
  ownerId: string,
  endpointId: string,
): Promise<boolean> {
  if (!isUuid(endpointId)) return false;
  return inTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `UPDATE webhook_endpoints SET deleted_at = now()
        WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL`,
      [endpointId, ownerId],
    );
    if (!rowCount) return false;
    await abandonPending(client, endpointId, 'the endpoint was deleted');
    return true;
  });
}

/**
 * Turns an endpoint on again (after a 410, say): events from now on are sent to it. Not one an
 * operator disabled: only an operator lifts that ('operator-disabled').
 */
export async function enableEndpoint(
  db: Queryable,
  ownerId: string,
  endpointId: string,
): Promise<WebhookEndpoint | 'operator-disabled' | undefined> {
  if (!isUuid(endpointId)) return undefined;
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL
      WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL AND NOT disabled_by_operator
      RETURNING ${ENDPOINT_COLUMNS}`,
    [endpointId, ownerId],
  );
  if (rows[0]) return toEndpoint(rows[0]);
  const { rowCount } = await db.query(
    `SELECT 1 FROM webhook_endpoints
      WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL AND disabled_by_operator`,
    [endpointId, ownerId],
  );
  return rowCount ? 'operator-disabled' : undefined;
}

/**
 * A new current secret; the one it replaces (and any older still live) stays live until
 * `previousExpireAt`, so every delivery meanwhile carries a signature under each.
 */
export async function rotateSecret(
  pool: Pool,
  ownerId: string,
  endpointId: string,
  secret: string,
  previousLiveForMs: number,
  /** Secrets live at once, the new one included: a rotation past it is refused. */
  maxLiveSecrets: number,
  /** Seals `secret` at rest. */
  keys: SecretKeyRing,
): Promise<{ previousExpireAt: Date } | { tooMany: { nextExpiresAt: Date } } | undefined> {
  if (!isUuid(endpointId)) return undefined;
  return inTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `SELECT 1 FROM webhook_endpoints
        WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [endpointId, ownerId],
    );
    if (!rowCount) return undefined;
    // Counted under the endpoint's lock: every rotation of it waits for this one.
    const live = await client.query<{ n: number; next_expires_at: Date | null }>(
      `SELECT count(*)::int AS n, min(expires_at) AS next_expires_at FROM webhook_secrets
        WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())`,
      [endpointId],
    );
    const { n, next_expires_at: nextExpiresAt } = live.rows[0]!;
    if (n >= maxLiveSecrets && nextExpiresAt) return { tooMany: { nextExpiresAt } };
    const { rows } = await client.query<{ expires_at: Date }>(
      `UPDATE webhook_secrets SET expires_at = now() + make_interval(secs => $2 / 1000.0)
        WHERE endpoint_id = $1 AND expires_at IS NULL RETURNING expires_at`,
      [endpointId, previousLiveForMs],
    );
    await insertSealedSecret(client, keys, endpointId, secret);
    return { previousExpireAt: rows[0]?.expires_at ?? new Date() };
  });
}

/** Ends what waits for an endpoint that is sent nothing more, saying why. */
export async function abandonPending(
  db: Queryable,
  endpointId: string,
  why: string,
): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET state = 'abandoned', ended_at = now(), last_error = $2
      WHERE endpoint_id = $1 AND state = 'pending'`,
    [endpointId, why],
  );
}
