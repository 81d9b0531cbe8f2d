/**
 * A round of a job's webhook deliveries: claims what is due under the owner's send slots, fixes
 * each event's body once, tries each delivery (webhookTry.ts) and records what it came to.
 */
import { findJob } from '../db/jobs';
import { findOwnedJobWithAttempts } from '../db/jobWithAttempts';
import type { Pool } from '../db/pool';
import { claimNextDeliveries, fixEventBody, type DueDelivery } from '../db/webhookDeliveryClaims';
import { recordDeliveryTry } from '../db/webhookDeliveryTries';
import type { SecretKeyRing } from '../domain/secretSealing';
import type { WebhookBreaker } from '../domain/webhooks';
import type { Logger } from '../logger';
import { inSpan } from '../telemetry/spans';
import { jobResource } from './jobDocument';
import type { WebhookNames } from './webhookNames';
import type { WebhookSendSlots } from './webhookSendSlots';
import { WebhookTargetPolicy, type AllowedTargets } from './webhookTargets';
import { tryOnce, WEBHOOK_TIMEOUT_MS } from './webhookTry';

/**
 * The body of an event: its type, when it happened (the job's end, or when an attempt was found
 * to need an operator), and the job resource as its owner sees it (read as the owner reads it,
 * so an endpoint is never sent another owner's job).
 */
async function eventBody(
  pool: Pool,
  delivery: Pick<DueDelivery, 'ownerId' | 'event' | 'createdAt'>,
  jobId: string,
): Promise<unknown> {
  const found = await findOwnedJobWithAttempts(pool, delivery.ownerId, jobId);
  if (!found) throw new Error(`job ${jobId} is gone`);
  const happenedAt =
    delivery.event === 'job.needs_operator' || delivery.event === 'job.late_result'
      ? delivery.createdAt
      : (found.job.finishedAt ?? delivery.createdAt);
  return {
    type: delivery.event,
    timestamp: happenedAt.toISOString(),
    data: jobResource(found.job, found.attempts),
  };
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname;
  } catch {
    return 'unparseable';
  }
};

/** What one round of a job's deliveries came to. */
export interface DeliveryRound {
  delivered: number;
  lastError?: string;
  /** No send slot came free for the job's owner: nothing was tried, the round comes again. */
  noSlot?: true;
  /** The earliest an endpoint held by its breaker takes a try again. */
  heldUntil?: Date;
}

/**
 * How long a round waits for a send slot of its owner: a moment, for the slots another round took
 * before knowing how many it needs and gives back at once; never seconds, or an owner's many
 * rounds queued on its own slots would hold the webhook queue's activity slots that other
 * owners' rounds need (the bench's webhook-isolation row showed it at 2 s). Without one, the
 * round gives its activity slot back and comes again after its jittered backoff.
 */
const SLOT_WAIT_MS = 250;

/** How long one round goes on claiming batches (its activity has two minutes in all). */
const ROUND_CLAIMS_FOR_MS = 60_000;

/**
 * Sends what waits of a job's events: to each endpoint its first waiting delivery, then the
 * next, in order, until one is refused (the rest of that endpoint waits behind it). Endpoints
 * are served side by side, as many at once as the owner's send slots allow; each try is
 * recorded before the next to its endpoint begins. An event's body is read and fixed once, for
 * all its endpoints.
 */
export async function deliverJobWebhooks(
  deps: {
    pool: Pool;
    logger: Logger;
    /** Whether receivers on internal networks may be called (ONEJOB_WEBHOOK_INTERNAL_TARGETS). */
    allowInternal: boolean;
    /** Internal hosts and ranges that may be called all the same (ONEJOB_WEBHOOK_ALLOWED_TARGETS). */
    allowedTargets?: AllowedTargets;
    /** Whether receivers may be called over plain http (ONEJOB_WEBHOOK_PLAIN_HTTP). Default: no. */
    allowPlainHttp?: boolean;
    slots: WebhookSendSlots;
    /** Opens the endpoints' signing secrets, stored sealed (ONEJOB_SECRET_KEYS). */
    secretKeys: SecretKeyRing;
    /** Resolves receivers' names, bounded (ONEJOB_WEBHOOK_DNS_*). */
    names: WebhookNames;
    /** When an endpoint's breaker opens, and how long it holds. */
    breaker: WebhookBreaker;
  },
  jobId: string,
): Promise<DeliveryRound> {
  const targets = new WebhookTargetPolicy(deps.allowInternal, deps.allowedTargets);
  const breaker = deps.breaker;
  const round: DeliveryRound = { delivered: 0 };
  const job = await findJob(deps.pool, jobId);
  if (!job) return round;
  const refused: string[] = [];
  const bodies = new Map<string, Promise<string>>();
  const bodyOf = (delivery: DueDelivery): Promise<string> => {
    if (delivery.body !== null) return Promise.resolve(delivery.body);
    let body = bodies.get(delivery.eventKey);
    if (!body) {
      body = eventBody(deps.pool, delivery, jobId).then((built) =>
        fixEventBody(deps.pool, jobId, delivery.eventKey, JSON.stringify(built)),
      );
      bodies.set(delivery.eventKey, body);
    }
    return body;
  };
  // New batches are claimed for a minute at most: the last one's tries (20 s, and a name's 5 s)
  // then end well inside the round's two minutes, so Temporal never starts a second attempt of
  // a round still sending. What is left waits for the next round.
  const claimUntil = Date.now() + ROUND_CLAIMS_FOR_MS;
  for (;;) {
    if (Date.now() >= claimUntil) return round;
    let slots = await deps.slots.take(job.ownerId, deps.slots.perOwner, SLOT_WAIT_MS);
    if (slots === 0) return { ...round, noSlot: true };
    try {
      const { claimed, heldUntil, heldReason } = await claimNextDeliveries(
        deps.pool,
        jobId,
        WEBHOOK_TIMEOUT_MS * 3,
        slots,
        refused,
        deps.secretKeys,
      );
      // The places not needed now go back at once, to the owner's other rounds.
      deps.slots.give(job.ownerId, slots - claimed.length);
      slots = claimed.length;
      if (heldUntil) {
        round.heldUntil = heldUntil;
        round.lastError = `an endpoint's breaker holds its deliveries until ${heldUntil.toISOString()}: ${heldReason}`;
      }
      if (claimed.length === 0) return round;
      // Every try ends before its place is given back, even when another one failed.
      const tries = await Promise.allSettled(
        claimed.map(async (delivery) => {
          const body = await bodyOf(delivery);
          // The host only: the URL's path and query are the owner's, and may hold a token.
          const answer = await inSpan(
            'webhook try',
            {
              'onejob.job_id': jobId,
              'onejob.webhook_event': delivery.event,
              'server.address': hostOf(delivery.url),
            },
            async (span) => {
              const tried = await tryOnce(delivery, body, {
                targets,
                allowPlainHttp: deps.allowPlainHttp ?? false,
                names: deps.names,
              });
              if (tried.status !== null)
                span.setAttribute('http.response.status_code', tried.status);
              return tried;
            },
          );
          const { operatorDetail, ...recorded } = answer;
          await recordDeliveryTry(deps.pool, delivery, recorded, breaker);
          if (answer.outcome === 'delivered') {
            round.delivered += 1;
            return;
          }
          if (answer.outcome === 'retry') refused.push(delivery.endpointId);
          round.lastError = `endpoint ${delivery.endpointId}: ${answer.error}`;
          deps.logger.warn(
            { jobId, deliveryId: delivery.id, event: delivery.event, status: answer.status },
            `webhook delivery refused: ${operatorDetail ?? answer.error}`,
          );
        }),
      );
      const failed = tries.find((t): t is PromiseRejectedResult => t.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      deps.slots.give(job.ownerId, slots);
    }
  }
}
