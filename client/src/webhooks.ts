import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies a webhook signed by the Standard Webhooks scheme (www.standardwebhooks.com): the
 * `webhook-signature` header lists `v1,<base64 HMAC-SHA256>` signatures, space-separated, of
 * `<webhook-id>.<webhook-timestamp>.<body>` under a `whsec_<base64 key>` secret. During a
 * rotation the sender signs with each live secret and a receiver may hold several: any match
 * of any secret verifies.
 */

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyWebhookOptions {
  /** How far the signed time may be from this clock, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** The receiver's clock, in seconds. Default: now. */
  nowSeconds?: number;
}

const PREFIX = 'whsec_';

function keyOf(secret: string): Buffer {
  const key = Buffer.from(
    secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret,
    'base64',
  );
  if (key.length === 0) throw new RangeError('a webhook secret is whsec_ and a base64 key');
  return key;
}

/** The header value the scheme defines, as a Headers object or a plain record gives it. */
function header(headers: Headers | Record<string, string | string[] | undefined>, name: string) {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return Array.isArray(value) ? value[0] : (value ?? undefined);
}

/**
 * Checks `body` (the exact bytes received, as text) against its headers with `secrets`; returns
 * the parsed payload, or throws WebhookVerificationError saying what did not hold.
 */
export function verifyWebhook<T = unknown>(
  secrets: string | string[],
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string,
  options: VerifyWebhookOptions = {},
): T {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'missing webhook-id, webhook-timestamp or webhook-signature',
    );
  if (!/^\d+$/.test(timestamp))
    throw new WebhookVerificationError('webhook-timestamp is not whole seconds');
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');

  const signed = `${id}.${timestamp}.${body}`;
  const offered = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = createHmac('sha256', keyOf(secret)).update(signed).digest();
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected)))
      return JSON.parse(body) as T;
  }
  throw new WebhookVerificationError('no signature matches any of the secrets');
}
