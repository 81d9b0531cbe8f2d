import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { standaloneProblem } from '../domain/problems';
import { hostAndPort } from '../settings/read';
import { exposition, type MetricsRegistry } from '../telemetry/histograms';
import { type MetricsAccess, mayReadMetrics, metricsRefusal } from './metricsAccess';
import { notReadyDetail, type Readiness } from './readiness';

/** A process's health endpoints, served on an address of their own. */
export interface HealthServer {
  /** `http://host:port`, the port as bound (0 asks for any free one). */
  url: string;
  close(): Promise<void>;
}

/**
 * `/healthz` (liveness: the process answers) and `/readyz` (readiness: `readiness()` says all its
 * dependencies answer; else 503 problem+json naming which did not, with Retry-After), the same
 * documents as the API's, and its `/metrics` under the same access rule, for a process that
 * serves no API: the worker. Nothing else is served.
 */
export async function serveHealth(options: {
  address: string;
  /** The setting the address came from, named when it cannot be listened on. */
  variable: string;
  readiness: () => Promise<Readiness>;
  /** Prometheus metrics at /metrics, to whoever `access` lets read them. */
  metrics?: { registry: MetricsRegistry; access: MetricsAccess };
}): Promise<HealthServer> {
  const { address, variable } = options;
  const { host, port } = hostAndPort(address, variable);
  const server = createServer((request, response) => {
    answer(request, response, options).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  // Probes come often and each on a connection of its own: none may hold the process open, and
  // every request ends (a probe that takes longer has its answer anyway: a failed check).
  server.keepAliveTimeout = 1_000;
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(`${variable}: cannot listen on ${address} (${error.code ?? error.message})`),
      ),
    );
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shownHost}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  { readiness, metrics }: Parameters<typeof serveHealth>[0],
): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  const known = path === '/healthz' || path === '/readyz' || (metrics && path === '/metrics');
  // As the API answers a route it does not have: 404, whatever the method.
  if (!known || (request.method !== 'GET' && request.method !== 'HEAD'))
    return send(response, standaloneProblem('not-found', `No route ${request.method} ${path}.`));
  if (path === '/healthz') return sendJson(response, 200, { ok: true });
  if (path === '/metrics' && metrics) {
    const { registry, access } = metrics;
    if (!mayReadMetrics(access, request.socket.remoteAddress, request.headers.authorization))
      return send(response, standaloneProblem('unauthorized', metricsRefusal(access)), {
        'www-authenticate': 'Bearer',
      });
    const { contentType, body } = await exposition(registry, request.headers.accept);
    response.writeHead(200, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : body);
    return;
  }
  const answer = await readiness();
  const { ready, checks } = answer;
  if (ready) return sendJson(response, 200, { ready: true, checks });
  return send(
    response,
    standaloneProblem('service-unavailable', notReadyDetail(answer), { instance: path, checks }),
  );
}

function sendJson(response: ServerResponse, status: number, document: unknown): void {
  const body = JSON.stringify(document);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

function send(
  response: ServerResponse,
  problem: ReturnType<typeof standaloneProblem>,
  headers: Record<string, string> = {},
): void {
  response.writeHead(problem.status, {
    ...problem.headers,
    ...headers,
    'cache-control': 'no-store',
  });
  response.end(response.req.method === 'HEAD' ? undefined : problem.body);
}
