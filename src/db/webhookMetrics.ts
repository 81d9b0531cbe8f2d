import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/**
 * How long the oldest delivery still pending has waited; 0 when none does. The first entry of
 * the partial index of pending deliveries (migration 0016): one row read, however long the
 * backlog.
 */
const OLDEST_PENDING = preparedStatement(
  'webhook-metrics.oldest-pending',
  `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS seconds
     FROM webhook_deliveries WHERE state = 'pending'`,
);

/**
 * Live endpoints whose breaker holds them now, through the index of holds (migration 0024):
 * only the holds still in the future are read, not every endpoint that ever failed.
 */
const ENDPOINTS_HELD = preparedStatement(
  'webhook-metrics.endpoints-held',
  `SELECT count(*)::int AS n
     FROM webhook_endpoint_health h JOIN webhook_endpoints e ON e.id = h.endpoint_id
    WHERE h.held_until > now() AND e.deleted_at IS NULL AND e.disabled_at IS NULL`,
);

export async function oldestPendingDeliverySeconds(db: Queryable): Promise<number> {
  return (await db.query<{ seconds: number }>(OLDEST_PENDING([]))).rows[0]?.seconds ?? 0;
}

export async function webhookEndpointsHeld(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>(ENDPOINTS_HELD([]))).rows[0]?.n ?? 0;
}
