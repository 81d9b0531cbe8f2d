/**
 * One try of a delivery: the POST to the receiver (its address checked, its answer bounded) and
 * what the answer decides, with what only operators may read of an internal receiver's failure.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { DueDelivery } from '../db/webhookDeliveryClaims';
import type { DeliveryTry } from '../db/webhookDeliveryTries';
import { DEFAULTS } from '../domain/defaults';
import { retryAfterMs } from '../domain/webhooks';
import { WEBHOOK_USER_AGENT } from '../telemetry/tracing';
import type { WebhookNames } from './webhookNames';
import { webhookSignature } from './webhookSigning';
import { isInternalAddress, webhookLookup, type WebhookTargetPolicy } from './webhookTargets';

/** How long one try waits for the receiver's answer (Standard Webhooks suggests 15–30 s). */
export const WEBHOOK_TIMEOUT_MS = 20_000;
/** Of a receiver's answer, this much is kept with the try (to say why it refused). */
const KEPT_ANSWER_BYTES = 200;

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

/**
 * What the owner reads of a try to an internal receiver that got no answer. Why the connection
 * failed (refused, reset, timed out) and how long that took is what a port scanner reads: an
 * owner whose endpoint an operator let onto an internal network gets neither.
 */
const INTERNAL_NO_ANSWER =
  'no answer (an internal receiver: why is in the service log, for its operators)';

/** A try, and what only operators read of it: the whole reason, where the owner gets less. */
export type TriedOnce = DeliveryTry & { operatorDetail?: string };

/** One POST to the receiver, and what its answer decides. Never follows a redirect. */
export async function tryOnce(
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
        'webhook-id': delivery.webhookId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(
          delivery.secrets,
          delivery.webhookId,
          timestamp,
          body,
        ),
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
