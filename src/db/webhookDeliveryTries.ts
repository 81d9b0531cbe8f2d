/**
 * What a try of a delivery came to, recorded with what it decides (delivered, a retry that
 * counts against the endpoint's breaker, a 410 that disables it), and a sender's giving up.
 */
import { webhookHoldMs, type WebhookBreaker } from '../domain/webhooks';
import { inTransaction, type Pool, type Queryable } from './pool';
import type { DueDelivery } from './webhookDeliveryClaims';
import { abandonPending } from './webhookEndpoints';

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

/**
 * Ends what still waits of a job's event, written before `writtenBefore` (when its sender began),
 * once that sender gives up; says how many it ended and how many written since still wait (a
 * redelivery that joined the running sender), which deserve a window of their own. One statement:
 * its snapshot counts what the update leaves.
 */
export async function failDeliveriesWrittenBefore(
  db: Queryable,
  event: { jobId: string; eventKey: string },
  writtenBefore: Date,
  why: string,
): Promise<{ failed: number; stillWaiting: number }> {
  const { rows } = await db.query<{ failed: number; still_waiting: number }>(
    `WITH failed AS (
       UPDATE webhook_deliveries SET state = 'failed', ended_at = now(), claimed_until = NULL,
              claim_token = NULL, last_error = coalesce(last_error, $4)
        WHERE job_id = $1 AND event_key = $2 AND state = 'pending' AND created_at < $3
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM failed)::int AS failed,
            (SELECT count(*) FROM webhook_deliveries
              WHERE job_id = $1 AND event_key = $2 AND state = 'pending' AND created_at >= $3)::int
              AS still_waiting`,
    [event.jobId, event.eventKey, writtenBefore, why],
  );
  return { failed: rows[0]!.failed, stillWaiting: rows[0]!.still_waiting };
}

/** Ends what still waits of a job's event once its sender gives up (senders recorded before
 * deliveries written later got a window of their own). */
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
