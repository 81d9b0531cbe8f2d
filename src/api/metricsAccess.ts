import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { sendProblem } from './problems';

/**
 * Who may read /metrics: anyone (the API listens on loopback only), whoever sends the metrics
 * token, or no one (a non-loopback bind without a token: the counts say how much the service
 * does and for whom, which is not for whoever can reach the port).
 */
export type MetricsAccess =
  { kind: 'open' } | { kind: 'token'; digest: Buffer } | { kind: 'closed' };

const digestOf = (text: string): Buffer => createHash('sha256').update(text).digest();

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

export function metricsAccessFor(host: string, token: string | undefined): MetricsAccess {
  if (token !== undefined) return { kind: 'token', digest: digestOf(token) };
  return isLoopbackHost(host) ? { kind: 'open' } : { kind: 'closed' };
}

/** An onRequest hook for /metrics that refuses, as a 401 problem, whoever may not read it. */
export function metricsGuard(access: MetricsAccess) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (access.kind === 'open') return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (access.kind === 'token' && match?.[1] && timingSafeEqual(digestOf(match[1]), access.digest))
      return;
    await sendProblem(
      reply,
      'unauthorized',
      access.kind === 'token'
        ? 'Send Authorization: Bearer <metrics token> (ONEJOB_METRICS_TOKEN).'
        : 'This API listens beyond loopback and has no ONEJOB_METRICS_TOKEN: /metrics is closed. Set one and scrape with Authorization: Bearer <it>.',
      {},
      { 'www-authenticate': 'Bearer' },
    );
  };
}
