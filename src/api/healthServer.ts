import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostAndPort } from '../config';
import type { Readiness } from '../service/readiness';
import { standaloneProblem } from './problems';

/** A process's health endpoints, served on an address of their own. */
export interface HealthServer {
  /** `http://host:port`, the port as bound (0 asks for any free one). */
  url: string;
  close(): Promise<void>;
}

/**
 * `/healthz` (liveness: the process answers) and `/readyz` (readiness: `readiness()` says all its
 * dependencies answer; else 503 problem+json naming which did not, with Retry-After), the same
 * documents as the API's, for a process that serves no API: the worker. Nothing else is served.
 */
export async function serveHealth(
  address: string,
  variable: string,
  readiness: () => Promise<Readiness>,
): Promise<HealthServer> {
  const { host, port } = hostAndPort(address, variable);
  const server = createServer((request, response) => {
    answer(request, response, readiness).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  // Probes come often and each on a connection of its own: none may hold the process open.
  server.keepAliveTimeout = 1_000;
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
  readiness: () => Promise<Readiness>,
): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  const known = path === '/healthz' || path === '/readyz';
  // As the API answers a route it does not have: 404, whatever the method.
  if (!known || (request.method !== 'GET' && request.method !== 'HEAD'))
    return send(response, standaloneProblem('not-found', `No route ${request.method} ${path}.`));
  if (path === '/healthz') return sendJson(response, 200, { ok: true });
  const { ready, checks } = await readiness();
  if (ready) return sendJson(response, 200, { ready: true, checks });
  const down = Object.keys(checks).filter((name) => !checks[name]!.ok);
  return send(
    response,
    standaloneProblem('service-unavailable', `Not ready: ${down.join(' and ')} did not answer.`, {
      instance: path,
      checks,
    }),
    { 'retry-after': '5' },
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
