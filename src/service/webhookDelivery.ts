import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { findJob } from '../db/jobs';
import { findOwnedJobWithAttempts } from '../db/jobWithAttempts';
import type { Pool } from '../db/pool';
import {
  claimNextDeliveries,
  fixEventBody,
  recordDeliveryTry,
  type DeliveryTry,
  type DueDelivery,
} from '../db/webhooks';
import { DEFAULTS } from '../domain/defaults';
import type { SecretKeyRing } from '../domain/secretSealing';
import { retryAfterMs, type WebhookBreaker } from '../domain/webhooks';
import type { Logger } from '../logger';
import { inSpan } from '../telemetry/spans';
import { WEBHOOK_USER_AGENT } from '../telemetry/tracing';
import { jobResource } from './jobDocument';
import type { WebhookNames } from './webhookNames';
import type { WebhookSendSlots } from './webhookSendSlots';
import {
  isInternalAddress,
  webhookLookup,
  WebhookTargetPolicy,
  type AllowedTargets,
} from './webhookTargets';

/** How long one try waits for the receiver's answer (Standard Webhooks suggests 15–30 s). */
export const WEBHOOK_TIMEOUT_MS = 20_000;
/** Of a receiver's answer, this much is kept with the try (to say why it refused). */
const KEPT_ANSWER_BYTES = 200;
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

/** What a receiver answered: its status, Retry-After, and the start of its answer. */
interface ReceiverAnswer {
  status: number;
  retryAfter: string | undefined;
  answer: string;
}

/**
 * One POST. Of the answer only the first bytes are read: then the connection is closed, so a
 * receiver that streams without end costs neither memory nor the try's time.
 */
function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  lookup: LookupFunction,
): Promise<ReceiverAnswer> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        // Names are resolved here (bounded) and checked; the connection goes to the address checked.
        lookup,
        agent: false,
      },
      (response) => {
        const kept: Buffer[] = [];
        let size = 0;
        const done = () => {
          const retryAfter = response.headers['retry-after'];
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            answer: Buffer.concat(kept).subarray(0, KEPT_ANSWER_BYTES).toString('utf8'),
          });
        };
        response.on('data', (chunk: Buffer) => {
          kept.push(chunk);
          size += chunk.length;
          if (size < KEPT_ANSWER_BYTES) return;
          done();
          response.destroy();
        });
        response.on('end', done);
        response.on('error', reject);
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${WEBHOOK_TIMEOUT_MS} ms`)),
      WEBHOOK_TIMEOUT_MS,
    );
    request.on('close', () => clearTimeout(timer));
    request.on('error', reject);
    request.end(body);
  });
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname;
  } catch {
    return 'unparseable';
  }
};

/**
 * What the owner reads of a try to an internal receiver that got no answer. Why the connection
 * failed (refused, reset, timed out) and how long that took is what a port scanner reads: an
 * owner whose endpoint an operator let onto an internal network gets neither.
 */
const INTERNAL_NO_ANSWER =
  'no answer (an internal receiver: why is in the service log, for its operators)';

/** A try, and what only operators read of it: the whole reason, where the owner gets less. */
type TriedOnce = DeliveryTry & { operatorDetail?: string };

/** One POST to the receiver, and what its answer decides. Never follows a redirect. */
async function tryOnce(
  delivery: DueDelivery,
  body: string,
  {
    targets,
    allowPlainHttp,
    names,
  }: { targets: WebhookTargetPolicy; allowPlainHttp: boolean; names: WebhookNames },
): Promise<TriedOnce> {
  const started = performance.now();
  const timestamp = Math.floor(Date.now() / 1000);
  // Whether this try goes to an internal address (one the operator let through): then its owner
  // reads only the status.
  let internal = false;
  try {
    const url = new URL(delivery.url);
    // An endpoint registered where http was allowed, tried where it is not: nothing is sent.
    if (!allowPlainHttp && url.protocol === 'http:')
      throw Object.assign(new Error('plain http is not allowed here: register an https URL'), {
        code: 'EPLAINHTTP',
      });
    // An address written in the URL is never looked up: check it here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !targets.permits(literal, literal))
      throw Object.assign(new Error(`${literal} is an internal address`), {
        code: 'EINTERNALADDRESS',
      });
    internal = (isIP(literal) !== 0 && isInternalAddress(literal)) || targets.namesHost(literal);
    const lookup: LookupFunction = webhookLookup(names, targets, (reached) => {
      internal ||= reached;
    });
    const { status, answer, retryAfter } = await post(
      url,
      {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(delivery.secrets, delivery.id, timestamp, body),
      },
      body,
      lookup,
    );
    const durationMs = performance.now() - started;
    if (status >= 200 && status < 300)
      return { status, error: null, durationMs, outcome: 'delivered' };
    const asked = retryAfterMs(retryAfter, Date.now(), DEFAULTS.webhookBreaker.longestHoldMs);
    const said = answer ? `answered ${status}: ${answer}` : `answered ${status}`;
    return {
      status,
      error: internal ? `answered ${status}` : said,
      ...(internal && answer ? { operatorDetail: said } : {}),
      durationMs,
      outcome: status === 410 ? 'gone' : 'retry',
      ...(asked === undefined ? {} : { retryAfterMs: asked }),
    };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = `${(error as Error).message}${code && !(error as Error).message.includes(code) ? ` (${code})` : ''}`;
    // A refusal before connecting (an address not let through) says nothing a scan could use.
    if (!internal || code === 'EINTERNALADDRESS')
      return {
        status: null,
        error: why,
        durationMs: performance.now() - started,
        outcome: 'retry',
      };
    return {
      status: null,
      error: INTERNAL_NO_ANSWER,
      operatorDetail: why,
      durationMs: 0,
      outcome: 'retry',
    };
  }
}

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
