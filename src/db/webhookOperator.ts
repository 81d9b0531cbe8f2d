import { isUuid } from '../domain/identity';
import type { WebhookEvent } from '../domain/webhooks';
import { inTransaction, type Pool, type Queryable } from './pool';
import { preparedStatement } from './statements';
import {
  abandonPending,
  BREAKER_COLUMNS,
  BREAKER_JOIN,
  toBreaker,
  type BreakerRow,
  type EndpointBreaker,
  type EndpointPageCursor,
} from './webhookEndpoints';

/** What an operator does to an endpoint, as its record names it. */
export const OPERATOR_WEBHOOK_ACTIONS = ['disable', 'enable', 'delete'] as const;
export type OperatorWebhookAction = (typeof OPERATOR_WEBHOOK_ACTIONS)[number];

/**
 * What the owner reads as the reason of an operator's disable, and what the deliveries it ends
 * say. The operator's own reason stays in the trail: it may name things the owner is not told.
 */
export const OPERATOR_DISABLED_REASON = 'an operator disabled the endpoint';
const OPERATOR_DELETED_REASON = 'an operator deleted the endpoint';

/** Any owner's endpoint, as operators see it: with its owner, never with its secrets. */
export interface OperatorEndpoint {
  id: string;
  ownerId: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  disabledByOperator: boolean;
  createdAt: Date;
  deletedAt: Date | null;
}

interface OperatorEndpointRow {
  id: string;
  owner_id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  disabled_by_operator: boolean;
  created_at: Date;
  deleted_at: Date | null;
}

const COLUMNS =
  'id, owner_id, url, events, description, disabled_at, disabled_reason, disabled_by_operator, created_at, deleted_at';

function toEndpoint(row: OperatorEndpointRow): OperatorEndpoint {
  return {
    id: row.id,
    ownerId: row.owner_id,
    url: row.url,
    events: row.events,
    description: row.description,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    disabledByOperator: row.disabled_by_operator,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
  };
}

/** Every owner's live endpoints (or one owner's), oldest first, a page at a time. */
export async function listAllEndpoints(
  db: Queryable,
  page: { ownerId?: string | undefined; limit: number; after?: EndpointPageCursor | undefined },
): Promise<{
  endpoints: Array<OperatorEndpoint & { breaker: EndpointBreaker }>;
  next?: EndpointPageCursor;
}> {
  const { rows } = await db.query<OperatorEndpointRow & BreakerRow & { created_at_micros: string }>(
    `SELECT ${COLUMNS}, ${BREAKER_COLUMNS},
            (extract(epoch FROM created_at) * 1000000)::bigint AS created_at_micros
       FROM webhook_endpoints ${BREAKER_JOIN}
      WHERE deleted_at IS NULL AND ($2::text IS NULL OR owner_id = $2)
        AND ($3::bigint IS NULL
             OR ((extract(epoch FROM created_at) * 1000000)::bigint, id) > ($3::bigint, $4::uuid))
      ORDER BY created_at, id
      LIMIT $1`,
    [
      page.limit + 1,
      page.ownerId ?? null,
      page.after?.createdAtMicros ?? null,
      page.after?.id ?? null,
    ],
  );
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1);
  return {
    endpoints: kept.map((row) => ({ ...toEndpoint(row), breaker: toBreaker(row) })),
    ...(rows.length > page.limit && last
      ? { next: { createdAtMicros: Number(last.created_at_micros), id: last.id } }
      : {}),
  };
}

const LOCK_ENDPOINT = preparedStatement(
  'webhook-operator.lock-endpoint',
  // NO KEY UPDATE: what follows changes no key, and a try's first failure, whose health row's
  // foreign key takes KEY SHARE on the endpoint while it holds its delivery, must not deadlock
  // with the abandoning of that delivery here.
  `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE`,
);
const DISABLE = preparedStatement(
  'webhook-operator.disable',
  `UPDATE webhook_endpoints
      SET disabled_at = now(), disabled_reason = $2, disabled_by_operator = true
    WHERE id = $1 RETURNING ${COLUMNS}`,
);
const ENABLE = preparedStatement(
  'webhook-operator.enable',
  `UPDATE webhook_endpoints
      SET disabled_at = NULL, disabled_reason = NULL, disabled_by_operator = false
    WHERE id = $1 RETURNING ${COLUMNS}`,
);
const DELETE = preparedStatement(
  'webhook-operator.delete',
  `UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
);
const RECORD = preparedStatement(
  'webhook-operator.record',
  `INSERT INTO webhook_operator_actions (operator, action, endpoint_id, owner_id, reason)
   VALUES ($1, $2, $3, $4, $5)`,
);

/**
 * An operator's action on any owner's endpoint, and its record, in one transaction under the
 * endpoint's lock. Disable: nothing more is written or sent for it, and what waited is
 * abandoned; the owner cannot enable it again. Enable: later events go to it (what was abandoned
 * stays so). Delete: as the owner's delete. An action that changes nothing (disable what an
 * operator disabled already, enable what is on) is answered with the endpoint and not recorded.
 * Undefined: no such live endpoint.
 */
export async function actOnEndpoint(
  pool: Pool,
  act: { operator: string; action: OperatorWebhookAction; endpointId: string; reason: string },
): Promise<{ endpoint: OperatorEndpoint; changed: boolean } | undefined> {
  if (!isUuid(act.endpointId)) return undefined;
  return inTransaction(pool, async (client) => {
    const found = await client.query<OperatorEndpointRow>(LOCK_ENDPOINT([act.endpointId]));
    const before = found.rows[0];
    if (!before) return undefined;
    let after: OperatorEndpointRow;
    if (act.action === 'disable') {
      if (before.disabled_by_operator) return { endpoint: toEndpoint(before), changed: false };
      after = (
        await client.query<OperatorEndpointRow>(DISABLE([before.id, OPERATOR_DISABLED_REASON]))
      ).rows[0]!;
      await abandonPending(client, before.id, OPERATOR_DISABLED_REASON);
    } else if (act.action === 'enable') {
      if (before.disabled_at === null) return { endpoint: toEndpoint(before), changed: false };
      after = (await client.query<OperatorEndpointRow>(ENABLE([before.id]))).rows[0]!;
    } else {
      after = (await client.query<OperatorEndpointRow>(DELETE([before.id]))).rows[0]!;
      await abandonPending(client, before.id, OPERATOR_DELETED_REASON);
    }
    await client.query(RECORD([act.operator, act.action, before.id, before.owner_id, act.reason]));
    return { endpoint: toEndpoint(after), changed: true };
  });
}

/** One operator action on an endpoint, as recorded. */
export interface OperatorWebhookRecord {
  id: string;
  at: Date;
  operator: string;
  action: OperatorWebhookAction;
  endpointId: string;
  ownerId: string;
  reason: string;
}

/** The trail, newest first, a page at a time (`before`: the id the previous page ended at). */
export async function listOperatorWebhookActions(
  db: Queryable,
  page: {
    endpointId?: string | undefined;
    ownerId?: string | undefined;
    limit: number;
    before?: string | undefined;
  },
): Promise<{ records: OperatorWebhookRecord[]; nextBefore?: string }> {
  if (page.endpointId !== undefined && !isUuid(page.endpointId)) return { records: [] };
  const { rows } = await db.query<{
    id: string;
    at: Date;
    operator: string;
    action: OperatorWebhookAction;
    endpoint_id: string;
    owner_id: string;
    reason: string;
  }>(
    `SELECT id::text AS id, at, operator, action, endpoint_id, owner_id, reason
       FROM webhook_operator_actions
      WHERE ($2::uuid IS NULL OR endpoint_id = $2) AND ($3::text IS NULL OR owner_id = $3)
        AND ($4::bigint IS NULL OR id < $4)
      ORDER BY id DESC
      LIMIT $1`,
    [page.limit + 1, page.endpointId ?? null, page.ownerId ?? null, page.before ?? null],
  );
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1);
  return {
    records: kept.map((row) => ({
      id: row.id,
      at: row.at,
      operator: row.operator,
      action: row.action,
      endpointId: row.endpoint_id,
      ownerId: row.owner_id,
      reason: row.reason,
    })),
    ...(rows.length > page.limit && last ? { nextBefore: last.id } : {}),
  };
}
