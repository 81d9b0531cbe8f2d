import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Provider callbacks are signed as `onejob-signature: t=<unix seconds>,v1=<hex>`, where the hex
 * is the HMAC-SHA256, with the provider's secret, of `<t>.<exact body>` (the scheme of the
 * well-known payment webhooks). The timestamp is inside what is signed, so a captured callback
 * cannot be replayed once it is older than the tolerance.
 */
/** Why a well-formed signature is refused when it is not the body's under the secret. */
export const SIGNATURE_MISMATCH = 'the signature does not match';

export const SIGNATURE_HEADER = 'onejob-signature';

function hmac(secret: string, timestamp: number, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** The header value for `body` signed at `timestamp` (seconds since the epoch). */
export function signCallback(
  secret: string,
  body: Buffer | string,
  timestamp = Math.floor(Date.now() / 1000),
): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, body)}`;
}

export type SignatureCheck =
  { ok: true; signedAt: Date; digest: string } | { ok: false; reason: string };

/** The timestamp and signature a header carries, or why it carries none. */
function parseSignature(
  header: string | string[] | undefined,
): { timestamp: number; given: string } | { reason: string } {
  if (typeof header !== 'string') return { reason: `no ${SIGNATURE_HEADER} header` };
  const parts = new Map(
    header.split(',').map((part) => {
      const cut = part.indexOf('=');
      return [part.slice(0, cut).trim(), part.slice(cut + 1).trim()] as const;
    }),
  );
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(timestamp) || !given || !/^[0-9a-f]{64}$/.test(given))
    return { reason: 'the signature must look like t=<unix seconds>,v1=<hex>' };
  return { timestamp, given };
}

/** Why a signature header is wrong whatever the body, or undefined: read before the body. */
export function unsignableProblem(header: string | string[] | undefined): string | undefined {
  const parsed = parseSignature(header);
  return 'reason' in parsed ? parsed.reason : undefined;
}

/** Checks a callback's signature and its age; the digest identifies it for replay detection. */
export function verifyCallbackSignature(
  secret: string,
  body: Buffer,
  header: string | string[] | undefined,
  options: { toleranceS: number; now?: number },
): SignatureCheck {
  const parsed = parseSignature(header);
  if ('reason' in parsed) return { ok: false, reason: parsed.reason };
  const { timestamp, given } = parsed;
  const expected = Buffer.from(hmac(secret, timestamp, body));
  if (!timingSafeEqual(expected, Buffer.from(given)))
    return { ok: false, reason: SIGNATURE_MISMATCH };
  const nowS = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceS;
  if (Math.abs(nowS - timestamp) > tolerance)
    return {
      ok: false,
      reason: `the signature is ${Math.abs(nowS - timestamp)} s old; at most ${tolerance} s are accepted`,
    };
  const digest = createHash('sha256').update(`${timestamp}.`).update(body).digest('hex');
  return { ok: true, signedAt: new Date(timestamp * 1000), digest };
}
