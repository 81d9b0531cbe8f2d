/**
 * The deliveries a job has: the events written for it (a job.needs_operator per endpoint),
 * those still waiting, each delivery's record with its tries, and the backstops' reads of
 * deliveries no sender holds.
 */
import type { DeliveryState, WebhookEvent } from '../domain/webhooks';
import { type Queryable } from './pool';
import { preparedStatement } from './statements';

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

/** A job's deliveries and each try, for its owner or an operator. */
export interface DeliveryRecord {
  id: string;
  /** Sent as webhook-id: its own id, or a redelivery's first delivery's. */
  webhookId: string;
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
    webhook_id: string;
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
    `SELECT d.position, d.id, coalesce(d.redelivery_of, d.id) AS webhook_id, d.endpoint_id, e.url, d.event, d.state, d.last_error, d.created_at, d.ended_at,
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
    webhookId: row.webhook_id,
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
