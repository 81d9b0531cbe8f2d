import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OneJobClient, OneJobProblemError } from '../client/src';

/**
 * The typed client's retry rules, against a tiny real HTTP server that answers a scripted
 * sequence (a stand-in for the API at the network boundary, where the client's retries live):
 * what it retries, that every retry carries the same Idempotency-Key, and where it stops.
 */

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  /** Problem type for an error answer; the job for a success. */
  type?: string;
}

interface Recorded {
  method: string;
  url: string;
  idempotencyKey: string | undefined;
  body: string;
  at: number;
}

const JOB = { id: '5b0d2d8e-0000-4000-8000-000000000001', status: 'pending', attempts: [] };

/** Serves `script` in order, one answer per request, and records every request. */
async function scriptedServer(script: Scripted[]) {
  const requests: Recorded[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const header = request.headers['idempotency-key'];
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        idempotencyKey: Array.isArray(header) ? header.join(',') : header,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const next = script[requests.length - 1] ?? { status: 500, type: 'script-exhausted' };
      const ok = next.status < 400;
      response.writeHead(next.status, {
        'content-type': ok ? 'application/json' : 'application/problem+json',
        ...next.headers,
      });
      response.end(
        JSON.stringify(
          ok ? JOB : { type: `/problems/${next.type}`, title: next.type, status: next.status },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let server: Awaited<ReturnType<typeof scriptedServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const client = (url: string, maxRetries = 8) =>
  new OneJobClient({ baseUrl: url, token: 'token-client-0001', initialBackoffMs: 1, maxRetries });

const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

const intent = { type: 'summarize', input: { text: 'Retried. Still one job.' } };

test('408, 429, 5xx and a retryable 409 (attempt-in-flight) are retried, every time with the same Idempotency-Key', async () => {
  server = await scriptedServer([
    { status: 408, type: 'request-timeout' },
    { status: 429, type: 'too-many-waits' },
    { status: 500, type: 'internal' },
    { status: 502, type: 'bad-gateway' },
    { status: 503, type: 'service-unavailable' },
    { status: 504, type: 'gateway-timeout' },
    { status: 409, type: 'attempt-in-flight' },
    { status: 201 },
  ]);
  const created = await client(server.url).createJob({ ...intent, idempotencyKey: 'order-42' });
  expect(created).toMatchObject({ idempotencyKey: 'order-42', job: { id: JOB.id } });

  expect(server.requests).toHaveLength(8);
  expect(server.requests.map((r) => r.idempotencyKey)).toEqual(times(8, 'order-42'));
  expect(new Set(server.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).size).toBe(1);
});

test('a generated key is generated once: the retries of one createJob all carry it', async () => {
  server = await scriptedServer([
    { status: 503, type: 'service-unavailable' },
    { status: 409, type: 'attempt-in-flight' },
    { status: 200, headers: { 'idempotent-replayed': 'true' } },
  ]);
  const created = await client(server.url).createJob(intent);
  expect(created.replayed).toBe(true);
  expect(server.requests.map((r) => r.idempotencyKey)).toEqual(times(3, created.idempotencyKey));
});

test('x-should-retry: false stops the retries at once, whatever the status, and surfaces a typed problem', async () => {
  server = await scriptedServer([
    { status: 503, type: 'service-unavailable' },
    { status: 409, type: 'idempotency-key-reuse', headers: { 'x-should-retry': 'false' } },
    { status: 201 },
  ]);
  const refused = client(server.url).createJob({ ...intent, idempotencyKey: 'order-43' });
  await expect(refused).rejects.toBeInstanceOf(OneJobProblemError);
  await expect(refused).rejects.toMatchObject({
    status: 409,
    retryable: false,
    problem: { type: '/problems/idempotency-key-reuse' },
  });
  expect(server.requests.map((r) => r.idempotencyKey)).toEqual(['order-43', 'order-43']);

  // Even a status it would otherwise retry.
  await server.close();
  server = await scriptedServer([
    { status: 503, type: 'service-unavailable', headers: { 'x-should-retry': 'false' } },
    { status: 201 },
  ]);
  await expect(
    client(server.url).createJob({ ...intent, idempotencyKey: 'order-44' }),
  ).rejects.toMatchObject({ status: 503, retryable: false });
  expect(server.requests).toHaveLength(1);
});

test('other 4xx answers are not retried', async () => {
  server = await scriptedServer([{ status: 400, type: 'invalid-input' }, { status: 201 }]);
  await expect(
    client(server.url).createJob({ ...intent, idempotencyKey: 'order-45' }),
  ).rejects.toMatchObject({ status: 400, retryable: false });
  expect(server.requests).toHaveLength(1);
});

test('retries stop after maxRetries, and the last problem surfaces', async () => {
  server = await scriptedServer(times<Scripted>(10, { status: 503, type: 'service-unavailable' }));
  await expect(
    client(server.url, 2).createJob({ ...intent, idempotencyKey: 'order-46' }),
  ).rejects.toMatchObject({ status: 503, retryable: true });
  expect(server.requests.map((r) => r.idempotencyKey)).toEqual(times(3, 'order-46'));
});

test('Retry-After is honoured: the retry does not come before the server said', async () => {
  server = await scriptedServer([
    { status: 429, type: 'too-many-waits', headers: { 'retry-after': '1' } },
    { status: 201 },
  ]);
  await client(server.url).createJob({ ...intent, idempotencyKey: 'order-47' });
  const [first, second] = server.requests;
  expect(second!.idempotencyKey).toBe(first!.idempotencyKey);
  // A lower bound only: a timer never fires early, however busy the machine is.
  expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
});
