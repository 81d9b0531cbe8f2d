/**
 * A sender's claim on a job's due deliveries (one per endpoint, breakers respected, secrets
 * opened for the try) and the event bytes every try of them sends.
 */
import type { SecretKeyRing } from '../domain/secretSealing';
import type { WebhookEvent } from '../domain/webhooks';
import { inTransaction, type Pool, type Queryable } from './pool';
import { openSecretRow } from './webhookSecrets';

/** One delivery as its sender needs it: where, what, and which secrets sign it. */
export interface DueDelivery {
  id: string;
  /** Sent as webhook-id: the delivery's own id, or a redelivery's first delivery's (0030). */
  webhookId: string;
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
      webhook_id: string;
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
      `SELECT d.id, coalesce(d.redelivery_of, d.id) AS webhook_id, d.endpoint_id, e.owner_id,
              e.url, d.event, d.event_key,
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
        webhookId: row.webhook_id,
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
