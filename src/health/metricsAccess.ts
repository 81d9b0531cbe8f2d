import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Who may read /metrics (the counts say how much the service does and for whom): without a
 * metrics token, callers whose connection comes from this machine only; with one, whoever sends
 * it, loopback callers too. Judged by the connection's address, not the bind address: behind a
 * proxy on the same host every caller looks loopback, so the proxy must not pass /metrics on.
 */
export type MetricsAccess = { kind: 'loopback' } | { kind: 'token'; digest: Buffer };

const digestOf = (text: string): Buffer => createHash('sha256').update(text).digest();

/** True for a peer address only this machine can have (IPv4-mapped IPv6 included). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4 === '::1' || /^127(\.\d{1,3}){3}$/.test(v4);
}

export function metricsAccessFor(token: string | undefined): MetricsAccess {
  return token === undefined ? { kind: 'loopback' } : { kind: 'token', digest: digestOf(token) };
}

/** Whether a caller from `remoteAddress` sending `authorization` may read /metrics. */
export function mayReadMetrics(
  access: MetricsAccess,
  remoteAddress: string | undefined,
  authorization: string | undefined,
): boolean {
  if (access.kind === 'loopback') return isLoopbackAddress(remoteAddress);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return Boolean(match?.[1] && timingSafeEqual(digestOf(match[1]), access.digest));
}

/** What a caller who may not read /metrics is told. */
export function metricsRefusal(access: MetricsAccess): string {
  return access.kind === 'token'
    ? 'Send Authorization: Bearer <metrics token> (ONEJOB_METRICS_TOKEN).'
    : 'Without ONEJOB_METRICS_TOKEN, /metrics answers callers on this machine only. Set one and scrape with Authorization: Bearer <it>.';
}
