import { createHmac, randomBytes } from 'node:crypto';
import { jobResource } from '../api/representation';
import { listAttempts } from '../db/attempts';
import { findJob } from '../db/jobs';
import type { Pool } from '../db/pool';
import {
  claimNextDeliveries,
  recordDeliveryTry,
  type DeliveryTry,
  type DueDelivery,
} from '../db/webhooks';
import type { Logger } from '../logger';

/** How long one try waits for the receiver's answer. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Of a receiver's answer, this much is kept with the try (to say why it refused). */
const KEPT_ANSWER_CHARS = 200;
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks writes them. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,<base64 HMAC-SHA256>` of
 * `<id>.<timestamp>.<body>` under each secret, space-separated (several during a rotation).
 */
export function webhookSignature(
  secrets: readonly string[],
  id: string,
  timestampS: number,
  body: string,
): string {
  const signed = `${id}.${timestampS}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
    })
    .join(' ');
}

/** The body of an event: its type, when it happened, and the job resource as its owner sees it. */
async function eventBody(pool: Pool, jobId: string, event: string): Promise<unknown> {
  const job = await findJob(pool, jobId);
  if (!job) throw new Error(`job ${jobId} is gone`);
  const attempts = await listAttempts(pool, jobId);
  return {
    type: event,
    timestamp: (job.finishedAt ?? new Date()).toISOString(),
    data: jobResource(job, attempts),
  };
}

/** One POST to the receiver, and what its answer decides. Never follows a redirect. */
async function tryOnce(delivery: DueDelivery, body: string): Promise<Omit<DeliveryTry, 'body'>> {
  const started = performance.now();
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(delivery.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'onejob-webhooks',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(delivery.secrets, delivery.id, timestamp, body),
      },
      body,
    });
    const answer = (await response.text().catch(() => '')).slice(0, KEPT_ANSWER_CHARS);
    const durationMs = performance.now() - started;
    if (response.status >= 200 && response.status < 300)
      return { status: response.status, error: null, durationMs, outcome: 'delivered' };
    return {
      status: response.status,
      error: answer ? `answered ${response.status}: ${answer}` : `answered ${response.status}`,
      durationMs,
      outcome: response.status === 410 ? 'gone' : 'retry',
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const message =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${WEBHOOK_TIMEOUT_MS} ms`
        : `${(error as Error).message}${cause ? ` (${cause})` : ''}`;
    return {
      status: null,
      error: message,
      durationMs: performance.now() - started,
      outcome: 'retry',
    };
  }
}

/** What one round of a job's deliveries came to. */
export interface DeliveryRound {
  delivered: number;
  /** Deliveries still waiting: tried and refused, held by another sender, or queued behind. */
  waiting: number;
  lastError?: string;
}

/**
 * Sends what waits of a job's events: to each endpoint its first waiting delivery, then the
 * next, in order, until one is refused (the rest of that endpoint waits behind it). Endpoints
 * are served side by side; each try is recorded before the next begins.
 */
export async function deliverJobWebhooks(
  deps: { pool: Pool; logger: Logger },
  jobId: string,
): Promise<DeliveryRound> {
  const round: DeliveryRound = { delivered: 0, waiting: 0 };
  const refused: string[] = [];
  for (;;) {
    const { claimed, waiting } = await claimNextDeliveries(
      deps.pool,
      jobId,
      WEBHOOK_TIMEOUT_MS * 3,
      refused,
    );
    round.waiting = waiting;
    if (claimed.length === 0) return round;
    await Promise.all(
      claimed.map(async (delivery) => {
        const body =
          delivery.body ?? JSON.stringify(await eventBody(deps.pool, jobId, delivery.event));
        const answer = await tryOnce(delivery, body);
        await recordDeliveryTry(deps.pool, delivery, { ...answer, body });
        if (answer.outcome === 'delivered') {
          round.delivered += 1;
          return;
        }
        if (answer.outcome === 'retry') refused.push(delivery.endpointId);
        round.lastError = `endpoint ${delivery.endpointId}: ${answer.error}`;
        deps.logger.warn(
          { jobId, deliveryId: delivery.id, event: delivery.event, status: answer.status },
          `webhook delivery refused: ${answer.error}`,
        );
      }),
    );
  }
}
