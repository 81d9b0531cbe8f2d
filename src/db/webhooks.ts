import { isUuid } from '../domain/identity';
import type { SecretKeyRing } from '../domain/secretSealing';
import {
  webhookHoldMs,
  type DeliveryState,
  type WebhookBreaker,
  type WebhookEvent,
} from '../domain/webhooks';
import { inTransaction, type Pool, type Queryable } from './pool';
import { preparedStatement } from './statements';
import { insertSealedSecret, openSecretRow } from './webhookSecrets';

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

/**
 * The event that a job's attempt has waited `unknown` for an operator: one delivery per
 * endpoint that takes it (none twice), and none once the job has ended, even by a transaction
 * that commits while this one runs. Returns whether any of the job's deliveries of it wait.
 */
export async function insertNeedsOperatorDeliveries(
  db: Queryable,
  jobId: string,
  eventKey: string,
): Promise<boolean> {
  const { rows } = await db.query<{ waiting: boolean }>(
    `WITH added AS (
       INSERT INTO webhook_deliveries (job_id, endpoint_id, event, event_key)
       SELECT j.id, e.id, 'job.needs_operator', $2
         FROM jobs j JOIN webhook_endpoints e ON e.owner_id = j.owner_id
        WHERE j.id = $1 AND j.terminal_status IS NULL
          AND e.deleted_at IS NULL AND e.disabled_at IS NULL
          AND 'job.needs_operator' = ANY (e.events)
          -- Waits for an ending still being written, then sees it: an event about a job that
          -- has ended would otherwise be written, and sent, after the ending's.
          FOR SHARE OF j
       ON CONFLICT DO NOTHING
       RETURNING 1)
     SELECT EXISTS (SELECT 1 FROM added)
         OR EXISTS (SELECT 1 FROM webhook_deliveries
                     WHERE job_id = $1 AND event_key = $2 AND state = 'pending') AS waiting`,
    [jobId, eventKey],
  );
  return rows[0]?.waiting ?? false;
}

/** The event keys of a job's deliveries still waiting to be sent. */
export async function pendingEventKeys(db: Queryable, jobId: string): Promise<string[]> {
  const { rows } = await db.query<{ event_key: string }>(
    `SELECT event_key FROM webhook_deliveries WHERE job_id = $1 AND state = 'pending'
      GROUP BY event_key ORDER BY min(position)`,
    [jobId],
  );
  return rows.map((row) => row.event_key);
}

/** One delivery as its sender needs it: where, what, and which secrets sign it. */
export interface DueDelivery {
  id: string;
  /** This claim's own: what the try is recorded under (a claim that ran out has another). */
  claimToken: string;
  endpointId: string;
  /** The endpoint's owner: the only one whose job it may be sent. */
  ownerId: string;
  url: string;
  event: WebhookEvent;
  eventKey: string;
  /** The exact body every try sends; null until the first try fixes it (fixDeliveryBody). */
  body: string | null;
  /** When the event was written: the time a job.needs_operator event carries. */
  createdAt: Date;
  tries: number;
  secrets: string[];
}

/**
 * The first waiting delivery of each endpoint a job has deliveries for, in order: a later event
 * to an endpoint waits until the earlier one to it has ended. At most `limit` are claimed, each
 * for `leaseMs`, so a second sender (another event's run, a restarted try) passes them by
 * meanwhile. Returns the claimed ones.
 */
export async function claimNextDeliveries(
  pool: Pool,
  jobId: string,
  leaseMs: number,
  limit: number,
  /** Endpoints this sender leaves alone now (they refused in this round). */
  skipEndpoints: readonly string[] = [],
  /** Opens the signing secrets, stored sealed (webhookSecrets.ts); needed once one is claimed. */
  keys?: SecretKeyRing,
): Promise<{ claimed: DueDelivery[]; heldUntil?: Date; heldReason?: string }> {
  return inTransaction(pool, async (client) => {
    // An endpoint deleted or disabled while a job's ending was being written (the ending's
    // trigger still saw it live) keeps a delivery that abandonPending could not see yet.
    await client.query(
      `UPDATE webhook_deliveries d
          SET state = 'abandoned', ended_at = now(), claimed_until = NULL, claim_token = NULL,
              last_error = CASE WHEN e.deleted_at IS NOT NULL THEN 'the endpoint was deleted'
                                ELSE e.disabled_reason END
         FROM webhook_endpoints e
        WHERE e.id = d.endpoint_id AND d.job_id = $1 AND d.state = 'pending'
          AND (e.deleted_at IS NOT NULL OR e.disabled_at IS NOT NULL)`,
      [jobId],
    );
    // Every waiting delivery of the job (one per endpoint and event, endpoints capped per
    // owner), locked; the first of each endpoint is due.
    const { rows: waiting } = await client.query<{
      id: string;
      endpoint_id: string;
      owner_id: string;
      url: string;
      event: WebhookEvent;
      event_key: string;
      body: string | null;
      tries: number;
      created_at: Date;
      free: boolean;
      held_until: Date | null;
      held_reason: string | null;
      probe: boolean;
    }>(
      `SELECT d.id, d.endpoint_id, e.owner_id, e.url, d.event, d.event_key,
              coalesce(d.body, b.body) AS body, d.tries, d.created_at,
              (d.claimed_until IS NULL OR d.claimed_until < now())
                AND NOT d.endpoint_id = ANY ($2) AS free,
              CASE WHEN h.held_until > now() THEN h.held_until END AS held_until,
              h.held_reason, h.held_until IS NOT NULL AS probe
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         LEFT JOIN webhook_event_bodies b ON b.job_id = d.job_id AND b.event_key = d.event_key
         LEFT JOIN webhook_endpoint_health h ON h.endpoint_id = d.endpoint_id
        WHERE d.job_id = $1 AND d.state = 'pending'
          -- Not one written after the step above looked (an ending's trigger that saw it live).
          AND e.deleted_at IS NULL AND e.disabled_at IS NULL
        ORDER BY d.position
        FOR UPDATE OF d`,
      [jobId, skipEndpoints],
    );
    const seen = new Set<string>();
    let heldUntil: Date | undefined;
    let heldReason: string | undefined;
    const due = waiting.filter((row) => {
      if (seen.has(row.endpoint_id)) return false;
      seen.add(row.endpoint_id);
      if (row.held_until) {
        // The endpoint's breaker is open: nothing goes to it before then.
        if (!heldUntil || row.held_until < heldUntil) {
          heldUntil = row.held_until;
          heldReason = row.held_reason ?? undefined;
        }
        return false;
      }
      return row.free;
    });
    // A breaker whose hold has passed lets one probe through, across every job: the first claim
    // to move its hold on by the lease sends it; the others pass the endpoint by.
    const probes = due.filter((row) => row.probe).map((row) => row.endpoint_id);
    const probing = new Set<string>();
    if (probes.length > 0) {
      const { rows: taken } = await client.query<{ endpoint_id: string }>(
        `UPDATE webhook_endpoint_health
            SET held_until = now() + make_interval(secs => $2 / 1000.0)
          WHERE endpoint_id = ANY ($1) AND held_until <= now()
          RETURNING endpoint_id`,
        [probes, leaseMs],
      );
      for (const row of taken) probing.add(row.endpoint_id);
    }
    const free = due.filter((row) => !row.probe || probing.has(row.endpoint_id)).slice(0, limit);
    const hold = heldUntil ? { heldUntil, heldReason: heldReason ?? 'held' } : {};
    if (free.length === 0) return { claimed: [], ...hold };
    const { rows: tokens } = await client.query<{ id: string; claim_token: string }>(
      `UPDATE webhook_deliveries
          SET claimed_until = now() + make_interval(secs => $2 / 1000.0),
              claim_token = gen_random_uuid()
        WHERE id = ANY ($1)
        RETURNING id, claim_token`,
      [free.map((row) => row.id), leaseMs],
    );
    const tokenOf = new Map(tokens.map((row) => [row.id, row.claim_token]));
    // Secrets are stored sealed; opened here, for this try only (webhookSecrets.ts).
    const { rows: secretRows } = await client.query<{
      id: string;
      endpoint_id: string;
      secret: string;
    }>(
      `SELECT id::text, endpoint_id, secret FROM webhook_secrets
        WHERE endpoint_id = ANY ($1) AND (expires_at IS NULL OR expires_at > now())
        ORDER BY id DESC`,
      [free.map((row) => row.endpoint_id)],
    );
    const secrets = new Map<string, string[]>();
    for (const row of secretRows) {
      const list = secrets.get(row.endpoint_id) ?? [];
      if (!keys) throw new Error('a webhook secret is sealed, and this sender holds no key ring');
      list.push(openSecretRow(keys, row));
      secrets.set(row.endpoint_id, list);
    }
    return {
      ...hold,
      claimed: free.map((row) => ({
        id: row.id,
        claimToken: tokenOf.get(row.id)!,
        endpointId: row.endpoint_id,
        ownerId: row.owner_id,
        url: row.url,
        event: row.event,
        eventKey: row.event_key,
        body: row.body,
        createdAt: row.created_at,
        tries: row.tries,
        secrets: secrets.get(row.endpoint_id) ?? [],
      })),
    };
  });
}

/**
 * Fixes the bytes of an event before its first try to any endpoint, and returns the bytes fixed
 * (those of another sender that was first). Every endpoint is sent these bytes, and a try whose
 * answer is never recorded (a crash, the database gone) is sent again with them, not rebuilt
 * from a job that may have changed.
 */
export async function fixEventBody(
  db: Queryable,
  jobId: string,
  eventKey: string,
  body: string,
): Promise<string> {
  const added = await db.query<{ body: string }>(
    `INSERT INTO webhook_event_bodies (job_id, event_key, body) VALUES ($1, $2, $3)
     ON CONFLICT (job_id, event_key) DO NOTHING
     RETURNING body`,
    [jobId, eventKey, body],
  );
  if (added.rows[0]) return added.rows[0].body;
  // Another sender fixed it first: read in a statement of its own, whose snapshot sees that
  // sender's commit (the insert's own snapshot, taken before it waited, does not).
  const { rows } = await db.query<{ body: string }>(
    'SELECT body FROM webhook_event_bodies WHERE job_id = $1 AND event_key = $2',
    [jobId, eventKey],
  );
  if (!rows[0]) throw new Error(`the body of ${eventKey} of job ${jobId} was not fixed`);
  return rows[0].body;
}

/** What one try came to: the receiver's status, or why there was none. */
export interface DeliveryTry {
  status: number | null;
  error: string | null;
  durationMs: number;
  outcome: 'delivered' | 'retry' | 'gone';
  /** The receiver's Retry-After, where it sent one (capped). */
  retryAfterMs?: number;
}

/**
 * Records a try and what it decided, in one transaction: delivered ends the delivery; `gone`
 * (410) disables the endpoint and abandons what waited for it; a retry frees it for the next,
 * and counts against the endpoint's breaker (webhookHoldMs). The try is recorded whatever
 * became of the delivery meanwhile: a claim that ran out, or a delivery ended by another
 * sender or an operator, still has its try kept. Only the claim's holder frees its claim.
 */
export async function recordDeliveryTry(
  pool: Pool,
  delivery: Pick<DueDelivery, 'id' | 'endpointId' | 'claimToken'>,
  attempt: DeliveryTry,
  breaker: WebhookBreaker,
): Promise<void> {
  await inTransaction(pool, async (client) => {
    // The endpoint first when it may be disabled: two 410s of one endpoint, each abandoning
    // the other's delivery, then take their locks in one order instead of waiting on each other.
    if (attempt.outcome === 'gone')
      await client.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE', [
        delivery.endpointId,
      ]);
    const { rows } = await client.query<{ tries: number }>(
      `UPDATE webhook_deliveries
          SET tries = tries + 1,
              state = CASE WHEN state = 'pending' AND $2 THEN 'delivered' ELSE state END,
              ended_at = CASE WHEN state = 'pending' AND $2 THEN now() ELSE ended_at END,
              claimed_until = CASE WHEN claim_token = $5 THEN NULL ELSE claimed_until END,
              claim_token = CASE WHEN claim_token = $5 THEN NULL ELSE claim_token END,
              last_status = CASE WHEN state = 'pending' THEN $3 ELSE last_status END,
              last_error = CASE WHEN state = 'pending' THEN $4 ELSE last_error END,
              last_try_at = now()
        WHERE id = $1
        RETURNING tries`,
      [
        delivery.id,
        attempt.outcome === 'delivered',
        attempt.status,
        attempt.error,
        delivery.claimToken,
      ],
    );
    const tried = rows[0];
    if (!tried) return;
    await client.query(
      `INSERT INTO webhook_delivery_tries (delivery_id, n, status, error, duration_ms)
       VALUES ($1, $2, $3, $4, $5)`,
      [delivery.id, tried.tries, attempt.status, attempt.error, Math.round(attempt.durationMs)],
    );
    if (attempt.outcome === 'delivered') {
      await client.query('DELETE FROM webhook_endpoint_health WHERE endpoint_id = $1', [
        delivery.endpointId,
      ]);
    } else if (attempt.outcome === 'gone') {
      await client.query(
        `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2
          WHERE id = $1 AND disabled_at IS NULL`,
        [delivery.endpointId, 'the receiver answered 410 Gone'],
      );
      await abandonPending(client, delivery.endpointId, 'the receiver answered 410 Gone');
    } else {
      const { rows: health } = await client.query<{ failures: number; held: boolean }>(
        `INSERT INTO webhook_endpoint_health AS h (endpoint_id, failures) VALUES ($1, 1)
         ON CONFLICT (endpoint_id) DO UPDATE SET failures = h.failures + 1
         RETURNING failures, held_until IS NOT NULL AS held`,
        [delivery.endpointId],
      );
      // An endpoint held before (by a Retry-After, below the threshold) whose probe failed is
      // held again, with this failure as its reason, never left on the probe's lease.
      const holdMs =
        webhookHoldMs(health[0]!.failures, attempt, breaker, Math.random()) ??
        (health[0]!.held ? breaker.firstHoldMs : undefined);
      if (holdMs !== undefined)
        await client.query(
          `UPDATE webhook_endpoint_health
              SET held_until = now() + make_interval(secs => $2 / 1000.0), held_reason = $3
            WHERE endpoint_id = $1`,
          [
            delivery.endpointId,
            holdMs,
            `${health[0]!.failures} tries in a row not answered 2xx, the last ${attempt.status === null ? 'with no answer' : `answered ${attempt.status}`}`,
          ],
        );
    }
  });
}

/** Ends what still waits of a job's event once its sender gives up. */
export async function failPendingDeliveries(
  db: Queryable,
  jobId: string,
  eventKey: string,
  why: string,
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries SET state = 'failed', ended_at = now(), claimed_until = NULL,
            claim_token = NULL, last_error = coalesce(last_error, $3)
      WHERE job_id = $1 AND event_key = $2 AND state = 'pending'`,
    [jobId, eventKey, why],
  );
  return rowCount ?? 0;
}

/** A job's deliveries and each try, for its owner or an operator. */
export interface DeliveryRecord {
  id: string;
  endpointId: string;
  url: string;
  event: WebhookEvent;
  state: DeliveryState;
  tries: Array<{
    n: number;
    at: Date;
    status: number | null;
    error: string | null;
    durationMs: number;
  }>;
  lastError: string | null;
  createdAt: Date;
  endedAt: Date | null;
}

/**
 * A page of a job's deliveries in the order they are sent, and the position the next page starts
 * after (if there is one).
 */
export async function deliveriesOfJob(
  db: Queryable,
  jobId: string,
  page: { limit: number; afterPosition?: number | undefined },
): Promise<{ deliveries: DeliveryRecord[]; nextPosition?: number }> {
  const { rows } = await db.query<{
    position: string;
    id: string;
    endpoint_id: string;
    url: string;
    event: WebhookEvent;
    state: DeliveryState;
    last_error: string | null;
    created_at: Date;
    ended_at: Date | null;
    tries: Array<{
      n: number;
      at: string;
      status: number | null;
      error: string | null;
      duration_ms: number;
    }>;
  }>(
    `SELECT d.position, d.id, d.endpoint_id, e.url, d.event, d.state, d.last_error, d.created_at, d.ended_at,
            coalesce((SELECT json_agg(json_build_object('n', t.n, 'at', t.at, 'status', t.status,
                                                        'error', t.error, 'duration_ms', t.duration_ms)
                                      ORDER BY t.n)
                        FROM webhook_delivery_tries t WHERE t.delivery_id = d.id), '[]') AS tries
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.job_id = $1 AND ($3::bigint IS NULL OR d.position > $3::bigint)
      ORDER BY d.position
      LIMIT $2`,
    [jobId, page.limit + 1, page.afterPosition ?? null],
  );
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1);
  const deliveries = kept.map((row) => ({
    id: row.id,
    endpointId: row.endpoint_id,
    url: row.url,
    event: row.event,
    state: row.state,
    lastError: row.last_error,
    createdAt: row.created_at,
    endedAt: row.ended_at,
    tries: row.tries.map((t) => ({
      n: t.n,
      at: new Date(t.at),
      status: t.status,
      error: t.error,
      durationMs: t.duration_ms,
    })),
  }));
  return rows.length > page.limit && last
    ? { deliveries, nextPosition: Number(last.position) }
    : { deliveries };
}

const UNSENT_DELIVERIES = preparedStatement(
  'webhooks.unsent-deliveries',
  `SELECT d.job_id, d.event_key FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.tries = 0 AND d.claimed_until IS NULL
      AND d.created_at < now() - $1::float8 * interval '1 millisecond'
      -- Not one queued behind an earlier event to the same endpoint: its sender is that
      -- event's (the stranded-delivery backstop sees to it).
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries earlier
                       WHERE earlier.job_id = d.job_id AND earlier.endpoint_id = d.endpoint_id
                         AND earlier.state = 'pending' AND earlier.position < d.position)
    GROUP BY d.job_id, d.event_key
    ORDER BY min(d.created_at)
    LIMIT $2`,
);

/**
 * Events no sender has ever taken up, `olderThanMs` after they were written: written with an
 * ending (or a late result) that no workflow was left to hand over, and that the process which
 * wrote it could not (a call's late answer in the seconds before its worker learns its run was
 * terminated). A sender that runs already makes the start a no-op.
 */
export async function unsentDeliveries(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<Array<{ jobId: string; eventKey: string }>> {
  const { rows } = await db.query<{ job_id: string; event_key: string }>(
    UNSENT_DELIVERIES([olderThanMs, limit]),
  );
  return rows.map((row) => ({ jobId: row.job_id, eventKey: row.event_key }));
}

/**
 * Jobs with a delivery that has waited past `olderThanMs` and nobody holds: the backstop that
 * starts their senders again (a job workflow that was terminated, an owner who registered an
 * endpoint after its job began). At most `limit`, the least recently tried first.
 */
export async function strandedDeliveries(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<Array<{ jobId: string; eventKey: string }>> {
  const { rows } = await db.query<{ job_id: string; event_key: string }>(
    `SELECT d.job_id, d.event_key FROM webhook_deliveries d
      WHERE d.state = 'pending' AND d.created_at < now() - make_interval(secs => $1 / 1000.0)
        AND (d.claimed_until IS NULL OR d.claimed_until < now())
      GROUP BY d.job_id, d.event_key
      -- Least recently tried first: a sender alive in its backoff has tried its job lately, so
      -- however many of those are older, a job that no sender tries comes first.
      ORDER BY (SELECT max(coalesce(x.last_try_at, x.created_at)) FROM webhook_deliveries x
                 WHERE x.job_id = d.job_id AND x.state = 'pending')
      LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows.map((row) => ({ jobId: row.job_id, eventKey: row.event_key }));
}
