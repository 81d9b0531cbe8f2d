/**
 * Webhook redeliveries (migration 0030): an event sent again to an endpoint as a new delivery
 * with the first one's webhook-id and bytes.
 */
import type { Queryable } from './pool';

/**
 * What to send again to one endpoint: one event (by a delivery of it), or every one whose
 * delivery ended undelivered (failed, or abandoned while the endpoint was disabled) since a time.
 */
export type RedeliverySelection = { deliveryId: string } | { failedSince: Date };

export interface Redelivery {
  id: string;
  jobId: string;
  eventKey: string;
  /** The first delivery: its id is the webhook-id the receiver sees again. */
  redeliveryOf: string;
}

/**
 * Writes the redeliveries (at most `limit`, oldest events first) and returns them. Chosen per
 * event: its latest delivery to the endpoint, which has ended. Every undelivered one since a
 * time leaves out an event delivered since or waiting again; one named event is sent again whatever
 * became of it, unless a redelivery of it waits. Nothing for an endpoint that is deleted,
 * disabled, or (with `ownerId`) not the owner's.
 */
export async function writeRedeliveries(
  db: Queryable,
  request: {
    endpointId: string;
    ownerId?: string | undefined;
    selection: RedeliverySelection;
    by: string;
    reason: string;
    limit: number;
  },
): Promise<Redelivery[]> {
  const one = 'deliveryId' in request.selection ? request.selection.deliveryId : null;
  const since = 'failedSince' in request.selection ? request.selection.failedSince : null;
  const { rows } = await db.query<{
    id: string;
    job_id: string;
    event_key: string;
    redelivery_of: string;
  }>(
    `WITH chosen AS (
       SELECT DISTINCT ON (coalesce(d.redelivery_of, d.id))
              coalesce(d.redelivery_of, d.id) AS first_id, d.job_id, d.endpoint_id, d.event,
              d.event_key, d.state, d.ended_at, coalesce(d.body, b.body) AS body
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         LEFT JOIN webhook_event_bodies b ON b.job_id = d.job_id AND b.event_key = d.event_key
        WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR e.owner_id = $2)
          AND e.deleted_at IS NULL AND e.disabled_at IS NULL
          -- Every one undelivered since a time: those that ended since (an index reads them).
          AND ($3::uuid IS NOT NULL OR d.ended_at >= $4::timestamptz)
          -- One event: its first delivery and its redeliveries, by their keys.
          AND ($3::uuid IS NULL
               OR d.id = (SELECT coalesce(n.redelivery_of, n.id) FROM webhook_deliveries n WHERE n.id = $3)
               OR d.redelivery_of =
                  (SELECT coalesce(n.redelivery_of, n.id) FROM webhook_deliveries n WHERE n.id = $3))
        ORDER BY coalesce(d.redelivery_of, d.id), d.position DESC)
     INSERT INTO webhook_deliveries
       (job_id, endpoint_id, event, event_key, body, redelivery_of, redelivered_by, redelivery_reason)
     SELECT c.job_id, c.endpoint_id, c.event, c.event_key, c.body, c.first_id, $5, $6
       FROM chosen c
      WHERE c.state <> 'pending'
        AND ($3::uuid IS NOT NULL
             OR (c.state IN ('failed', 'abandoned') AND c.ended_at >= $4::timestamptz))
      ORDER BY c.ended_at, c.first_id
      LIMIT $7
     ON CONFLICT DO NOTHING
     RETURNING id, job_id, event_key, redelivery_of`,
    [
      request.endpointId,
      request.ownerId ?? null,
      one,
      since,
      request.by,
      request.reason,
      request.limit,
    ],
  );
  return rows.map((row) => ({
    id: row.id,
    jobId: row.job_id,
    eventKey: row.event_key,
    redeliveryOf: row.redelivery_of,
  }));
}

/** A delivery to an endpoint, as a redelivery request names it: its state, or none. */
export async function deliveryToEndpoint(
  db: Queryable,
  endpointId: string,
  deliveryId: string,
): Promise<{ state: string; waitingAgain: boolean } | undefined> {
  const { rows } = await db.query<{ state: string; waiting_again: boolean }>(
    `SELECT d.state,
            EXISTS (SELECT 1 FROM webhook_deliveries r
                     WHERE r.redelivery_of = coalesce(d.redelivery_of, d.id)
                       AND r.state = 'pending') AS waiting_again
       FROM webhook_deliveries d WHERE d.id = $1 AND d.endpoint_id = $2`,
    [deliveryId, endpointId],
  );
  return rows[0] && { state: rows[0].state, waitingAgain: rows[0].waiting_again };
}

/** An endpoint a redelivery is asked for (its owner's, when `ownerId` is given): whether it takes events. */
export async function endpointToRedeliverTo(
  db: Queryable,
  endpointId: string,
  ownerId: string | undefined,
): Promise<{ ownerId: string; disabledReason: string | null } | undefined> {
  const { rows } = await db.query<{ owner_id: string; disabled_reason: string | null }>(
    `SELECT owner_id, CASE WHEN disabled_at IS NOT NULL
                           THEN coalesce(disabled_reason, 'disabled') END AS disabled_reason
       FROM webhook_endpoints
      WHERE id = $1 AND ($2::text IS NULL OR owner_id = $2) AND deleted_at IS NULL`,
    [endpointId, ownerId ?? null],
  );
  return rows[0] && { ownerId: rows[0].owner_id, disabledReason: rows[0].disabled_reason };
}

/**
 * Ends the endpoint's breaker hold, if it holds: someone who asks for events again says the
 * receiver is back, so its next try is a probe now (a failing one holds it again).
 */
export async function probeEndpointNow(db: Queryable, endpointId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoint_health SET held_until = now()
      WHERE endpoint_id = $1 AND held_until > now()`,
    [endpointId],
  );
}
