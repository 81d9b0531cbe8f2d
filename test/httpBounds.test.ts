import { connect, type Socket } from 'node:net';
import { PROBLEM_TYPES } from '../src/domain/problems';
import { TEST_TOKEN } from './support/identities';
import { createJob, type JobView, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { answersIn, streamRequest, trickleRequest } from './support/rawHttp';
import { useTestStack } from './support/stack';

/**
 * The edges of the HTTP contract: how long a read may wait, how large a page may be, the
 * explanation behind every problem type, and the OpenAPI document.
 */
const stack = useTestStack({ certify: [['simulator-backup', 'summarize']] });

let done: JobView | undefined;
/** A succeeded job of the test owner (a wait on it answers at once). */
async function succeededJob(): Promise<JobView> {
  if (done) return done;
  for (const text of ['Bounds are promises. Tests keep them.', 'Pages have edges. So do waits.']) {
    const job = await createJob(stack, { type: 'summarize', input: { text } });
    done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  }
  return done!;
}

async function expectProblem(response: Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await response.json()) as { type: string; status: number; title: string };
  expect(problem).toMatchObject({ type: `/problems/${type}`, status });
  expect(problem.title).toEqual(expect.any(String));
  return problem;
}

test.each(['61', '60.5', '3600', '-1', '-0.5', 'abc', 'ten', 'NaN', 'Infinity'])(
  '?wait=%s is refused with 400 problem+json (0 to 60 seconds only)',
  async (wait) => {
    const job = await succeededJob();
    const response = await stack.request('GET', `/v1/jobs/${job.id}?wait=${wait}`);
    await expectProblem(response, 400, 'validation-error');
  },
);

test.each(['60', '0', '1', '0.5'])('?wait=%s is accepted', async (wait) => {
  const job = await succeededJob();
  const response = await stack.request('GET', `/v1/jobs/${job.id}?wait=${wait}`);
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ id: job.id, status: 'succeeded' });
});

test.each(['0', '101', '-1', '1.5', 'abc', '1000000'])(
  'list ?limit=%s is refused with 400 problem+json (1 to 100 only)',
  async (limit) => {
    await succeededJob();
    await expectProblem(
      await stack.request('GET', `/v1/jobs?limit=${limit}`),
      400,
      'validation-error',
    );
  },
);

test('list ?limit=100 and ?limit=1 are accepted, and a page never holds more than its limit', async () => {
  await succeededJob();
  const { rows } = await stack.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
  expect(rows[0]!.n).toBeGreaterThanOrEqual(2);

  const all = await stack.request('GET', '/v1/jobs?limit=100');
  expect(all.status).toBe(200);
  const full = (await all.json()) as { jobs: JobView[]; nextCursor: string | null };
  expect(full.jobs).toHaveLength(rows[0]!.n);
  expect(full.nextCursor).toBeNull();

  const one = await stack.request('GET', '/v1/jobs?limit=1');
  expect(one.status).toBe(200);
  const first = (await one.json()) as { jobs: JobView[]; nextCursor: string | null };
  expect(first.jobs.map((j) => j.id)).toEqual([full.jobs[0]!.id]);
  expect(first.nextCursor).toEqual(expect.any(String));
});

test('GET /problems/<type> explains every problem type the API answers with; an unknown type is 404', async () => {
  const types = Object.keys(PROBLEM_TYPES);
  // The types the README names are among them.
  expect(types).toEqual(
    expect.arrayContaining([
      'idempotency-key-reuse',
      'idempotency-key-missing',
      'idempotency-key-invalid',
      'malformed-body',
      'invalid-input',
      'validation-error',
      'unknown-job-type',
      'unknown-provider',
      'body-too-large',
      'unauthorized',
      'service-unavailable',
      'too-many-waits',
      'attempt-in-flight',
      'job-terminal',
      'provider-not-certified',
      'attempt-limit-reached',
      'hedging-not-allowed',
      'bad-signature',
      'not-found',
    ]),
  );
  for (const type of types) {
    const response = await fetch(`${stack.apiUrl}/problems/${type}`);
    expect([type, response.status]).toEqual([type, 200]);
    const explained = (await response.json()) as { type: string; title: string; status: number };
    expect(explained).toEqual({
      type: `/problems/${type}`,
      title: expect.stringMatching(/\w+ \w+/),
      status: PROBLEM_TYPES[type as keyof typeof PROBLEM_TYPES].status,
    });
  }
  // A problem a real answer carries resolves to its explanation.
  const missing = await stack.request('POST', '/v1/jobs', {
    body: { type: 'summarize', input: { text: 'No key. Refused.' } },
  });
  const problem = await expectProblem(missing, 400, 'idempotency-key-missing');
  expect((await fetch(`${stack.apiUrl}${problem.type}`)).status).toBe(200);

  await expectProblem(await fetch(`${stack.apiUrl}/problems/no-such-problem`), 404, 'not-found');
  await expectProblem(await fetch(`${stack.apiUrl}/problems/toString`), 404, 'not-found');
});

interface OpenApiOperation {
  summary?: string;
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: unknown }>;
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { securitySchemes?: Record<string, unknown> };
}

test('/docs/json is an OpenAPI 3 document that lists every route the README names, each well-formed', async () => {
  const response = await fetch(`${stack.apiUrl}/docs/json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const doc = (await response.json()) as OpenApiDocument;
  expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
  expect(doc.info).toEqual(
    expect.objectContaining({ title: expect.any(String), version: expect.any(String) }),
  );
  expect(doc.components?.securitySchemes).toEqual({
    bearer: { type: 'http', scheme: 'bearer' },
  });

  const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(routes).toEqual(
    expect.arrayContaining([
      'POST /v1/jobs',
      'GET /v1/jobs',
      'GET /v1/jobs/{id}',
      'POST /v1/jobs/{id}/attempts',
      'POST /v1/operator/attempts/{attemptId}/resolve',
      'POST /v1/operator/jobs/{id}/cancel',
      'POST /v1/callbacks/{provider}',
    ]),
  );

  for (const [path, methods] of Object.entries(doc.paths)) {
    const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const [method, operation] of Object.entries(methods)) {
      const where = `${method.toUpperCase()} ${path}`;
      // Every operation answers something, and every path template has its required parameter.
      expect([where, Object.keys(operation.responses ?? {}).length > 0]).toEqual([where, true]);
      for (const name of templated) {
        expect([where, operation.parameters ?? []]).toEqual([
          where,
          expect.arrayContaining([expect.objectContaining({ in: 'path', name, required: true })]),
        ]);
      }
    }
  }

  // The documented bounds are the enforced ones.
  const create = doc.paths['/v1/jobs']!.post!;
  expect(create.parameters).toEqual(
    expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key' })]),
  );
  expect(create.requestBody?.content?.['application/json']?.schema).toMatchObject({
    required: expect.arrayContaining(['type', 'input']),
    additionalProperties: false,
  });
  expect(doc.paths['/v1/jobs/{id}']!.get!.parameters).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        in: 'query',
        name: 'wait',
        schema: expect.objectContaining({ minimum: 0, maximum: 60 }),
      }),
    ]),
  );
  expect(doc.paths['/v1/jobs']!.get!.parameters).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        in: 'query',
        name: 'limit',
        schema: expect.objectContaining({ minimum: 1, maximum: 100 }),
      }),
    ]),
  );
  // The UI is served too.
  expect((await fetch(`${stack.apiUrl}/docs`, { redirect: 'follow' })).status).toBe(200);
});

const MiB = 1024 * 1024;
/** The head of a job create whose body is `length` bytes, far above the 1 MiB limit. */
const oversizedCreate = (length: number) =>
  [
    'POST /v1/jobs HTTP/1.1',
    'host: 127.0.0.1',
    `authorization: Bearer ${TEST_TOKEN}`,
    'content-type: application/json',
    `idempotency-key: oversized-${length}`,
    `content-length: ${length}`,
    '',
    '',
  ].join('\r\n');

test('a client still sending a body over the limit gets its 413, and the connection stays usable', async () => {
  // 32 MiB is more than the two sides' socket buffers hold: the server answers long before the
  // client has sent it all. A server that closed then would reset the upload (and could lose
  // the 413 with it); this one reads the rest, throws it away, and takes the next request.
  const port = Number(new URL(stack.apiUrl).port);
  const seen = await streamRequest(
    port,
    oversizedCreate(32 * MiB),
    32 * MiB,
    'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n',
  );
  expect({ error: seen.error, written: seen.written }).toEqual({
    error: undefined,
    written: 32 * MiB,
  });
  const [refused, next, ...more] = answersIn(seen.received);
  expect(refused?.status).toBe(413);
  expect(refused?.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(refused!.body.toString('utf8'))).toMatchObject({
    type: '/problems/body-too-large',
    status: 413,
  });
  expect(next?.status).toBe(200);
  expect(more).toEqual([]);
});

test('a client that asked to close the connection, still sending a body over the limit, gets its 413 and a clean close: the server goes on reading after it (no reset)', async () => {
  // The server closes after this answer, as asked. Closing at once, with the rest of the body
  // unread, makes the kernel reset the connection, and a reset can destroy the 413 before the
  // client reads it (RFC 9112, section 9.6). Here the answer and the server's FIN come first
  // and the server goes on reading: the client stops sending when it sees the FIN (Node's
  // sockets do), and its upload ends without a reset or a broken pipe.
  const port = Number(new URL(stack.apiUrl).port);
  const head = oversizedCreate(32 * MiB).replace('\r\n\r\n', '\r\nconnection: close\r\n\r\n');
  const seen = await streamRequest(port, head, 32 * MiB);
  expect(seen.error).toBeUndefined();
  const [refused, ...more] = answersIn(seen.received);
  expect(refused?.status).toBe(413);
  expect(refused?.headers.connection).toBe('close');
  expect(more).toEqual([]);
});

/**
 * Streams a 32 MiB body behind a head Node's server refuses before the body is read, and gives
 * the one answer the client got, having checked that the upload ended without a reset.
 */
async function refusedBeforeItsBody(extraHeaders: string) {
  const port = Number(new URL(stack.apiUrl).port);
  const head = oversizedCreate(32 * MiB).replace('\r\n\r\n', `\r\n${extraHeaders}\r\n`);
  const seen = await streamRequest(port, head, 32 * MiB);
  expect(seen.error).toBeUndefined();
  const [refused, ...more] = answersIn(seen.received);
  expect(more).toEqual([]);
  return {
    status: refused?.status,
    connection: refused?.headers.connection,
    type: refused && (JSON.parse(refused.body.toString('utf8')) as { type?: string }).type,
  };
}

test.each([
  ['keeps the connection', ''],
  ['asked to close the connection', 'connection: close\r\n'],
])(
  'a client still sending a body with an Expect other than 100-continue, that %s, gets its 417 problem and a clean close (no reset)',
  async (_case, connection) => {
    // Node answers such a request before its body is read (checkExpectation). A close with the
    // body unread would reset the connection and could destroy the 417 (the HTTP fuzzer saw it,
    // seed 1023855613): the close lingers, reading the rest of the body and throwing it away.
    expect(await refusedBeforeItsBody(`expect: something-else\r\n${connection}`)).toEqual({
      status: 417,
      connection: 'close',
      type: '/problems/expectation-failed',
    });
  },
);

test('a body refused with 417 for its Expect is read and thrown away only up to the bound in bytes: a client that keeps sending is cut off', async () => {
  const port = Number(new URL(stack.apiUrl).port);
  const head = oversizedCreate(1024 * MiB).replace(
    '\r\n\r\n',
    '\r\nexpect: something-else\r\n\r\n',
  );
  // The 417 closes the connection; this client goes on sending all the same.
  const seen = await streamRequest(port, head, 1024 * MiB, '', { keepSendingAfterClose: true });
  expect(seen.error).toMatch(/^(ECONNRESET|EPIPE)$/);
  expect(seen.written).toBeLessThan(128 * MiB);
  expect(answersIn(seen.received)[0]?.status).toBe(417);
});

test.each([
  ['a header with an empty name', ': no-name\r\n'],
  ['a NUL in a header value', 'x-note: a\u0000b\r\n'],
])(
  'a client still sending a body after headers the parser refuses (%s) gets its 400 problem and a clean close (no reset)',
  async (_case, badHeader) => {
    // Node's parser refuses such a request before any request exists (clientError). Closing with
    // the body unread would reset the connection and could destroy the 400 (the HTTP fuzzer saw
    // it, seed 1034873961): the close lingers, reading the rest and throwing it away.
    expect(await refusedBeforeItsBody(badHeader)).toEqual({
      status: 400,
      connection: 'close',
      type: '/problems/malformed-request',
    });
  },
);

test('the rest of a request the parser refused is read and thrown away only up to the bound in bytes: a client that keeps sending is cut off', async () => {
  const port = Number(new URL(stack.apiUrl).port);
  const head = oversizedCreate(1024 * MiB).replace('\r\n\r\n', '\r\n: no-name\r\n\r\n');
  const seen = await streamRequest(port, head, 1024 * MiB, '', { keepSendingAfterClose: true });
  expect(seen.error).toMatch(/^(ECONNRESET|EPIPE)$/);
  expect(seen.written).toBeLessThan(128 * MiB);
  expect(answersIn(seen.received)[0]?.status).toBe(400);
});

test('a body over the limit is read and thrown away only up to a bound: a client that keeps sending is cut off', async () => {
  const port = Number(new URL(stack.apiUrl).port);
  const seen = await streamRequest(port, oversizedCreate(1024 * MiB), 1024 * MiB);
  expect(seen.error).toMatch(/^(ECONNRESET|EPIPE)$/);
  // The bound is 64 MiB past the limit; what the sockets' buffers held on top is a few MiB.
  expect(seen.written).toBeLessThan(128 * MiB);
});

test('a body refused with 401 is read and thrown away only up to the bound in bytes: a client that keeps sending is cut off', async () => {
  // The token is checked before the body is read; Node would otherwise drain the rest for ever.
  const port = Number(new URL(stack.apiUrl).port);
  const head = oversizedCreate(1024 * MiB).replace(TEST_TOKEN, 'not-a-token-of-anyone');
  const seen = await streamRequest(port, head, 1024 * MiB);
  expect(seen.error).toMatch(/^(ECONNRESET|EPIPE)$/);
  expect(seen.written).toBeLessThan(128 * MiB);
  expect(answersIn(seen.received)[0]?.status).toBe(401);
});

test('responses do not name the replica that answered unless ONEJOB_INSTANCE_HEADER=true', async () => {
  expect((await fetch(`${stack.apiUrl}/healthz`)).headers.get('x-onejob-instance')).toBeNull();
  const named = await stack.startExtraApi({ ONEJOB_INSTANCE_HEADER: 'true' });
  try {
    const response = await fetch(`${named.url}/healthz`);
    expect(response.headers.get('x-onejob-instance')).toMatch(/^.+:\d+$/);
  } finally {
    await named.stop();
  }
});

describe('every request ends: an API with bounds of a few seconds', () => {
  const REQUEST_TIMEOUT_MS = 4_000;
  const HEADERS_TIMEOUT_MS = 2_000;
  const REFUSED_BODY_MAX_MS = 1_000;
  const MAX_CONNECTIONS = 4;
  /**
   * How long a trickling client waits for the server to cut it off. Which bound cut it off is
   * told by state, not by this clock: the answer says `request-timeout`, or the only bound short
   * enough to cut in time was the one under test (`patient` below has a request timeout far past
   * this). The lower bounds are exact: no cut comes before its bound.
   */
  const GIVE_UP_AFTER_MS = 15_000;
  /** An API whose request timeout cuts a trickling client off well before it gives up. */
  let bounded: { port: number; stop(): Promise<void> } | undefined;
  /** The same bounds, but a request timeout the trickling client never lives to see. */
  let patient: { port: number; stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    const bounds = {
      ONEJOB_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      ONEJOB_REFUSED_BODY_MAX_MS: String(REFUSED_BODY_MAX_MS),
      ONEJOB_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    };
    bounded = await stack.startExtraApi({
      ...bounds,
      ONEJOB_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
    patient = await stack.startExtraApi({
      ...bounds,
      ONEJOB_REQUEST_TIMEOUT_MS: String(4 * GIVE_UP_AFTER_MS),
    });
  });
  afterAll(async () => {
    await bounded?.stop();
    await patient?.stop();
  });
  const trickle = (port: number, atOnce: string, trickled: string) =>
    trickleRequest(port, atOnce, trickled, {
      intervalMs: 1_000,
      giveUpAfterMs: GIVE_UP_AFTER_MS,
    });
  const headOf = (path: string, headers: string[], length: number) =>
    [
      `POST ${path} HTTP/1.1`,
      'host: 127.0.0.1',
      ...headers,
      `content-length: ${length}`,
      '',
      '',
    ].join('\r\n');

  test('a client that sends its body one byte a second is cut off at the request timeout, with a 408 problem', async () => {
    const head = headOf(
      '/v1/jobs',
      [
        `authorization: Bearer ${TEST_TOKEN}`,
        'content-type: application/json',
        'idempotency-key: trickled-body',
      ],
      1000,
    );
    const seen = await trickle(bounded!.port, head, 'x'.repeat(1000));
    // The server closed the connection (the client never gave up), not before the timeout, and
    // said why: the request timeout.
    expect(seen.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    const [answer] = answersIn(seen.received);
    expect(answer?.status).toBe(408);
    expect(answer?.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(answer!.body.toString('utf8'))).toMatchObject({
      type: '/problems/request-timeout',
      status: 408,
    });
  });

  test('a client that sends its headers one byte a second is cut off at the headers timeout', async () => {
    const head = headOf('/v1/jobs', [`authorization: Bearer ${TEST_TOKEN}`], 10);
    // The first byte at once: the headers' time runs from it. On `patient` no other bound could
    // cut this client off before it gives up: the server closing it is the headers timeout.
    const seen = await trickle(patient!.port, head.slice(0, 1), head.slice(1));
    expect(seen.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(seen.written).toBeLessThan(head.length - 1);
    expect(answersIn(seen.received)[0]?.status).toBe(408);
  });

  test('an unsigned callback is refused with 401 before its body, and a body still trickling after the refusal is cut off at the bound in time', async () => {
    const head = headOf('/v1/callbacks/simulator-pay', ['content-type: application/json'], 1000);
    // On `patient` the request timeout is past the client's patience: the server closing the
    // connection is the refused-body bound.
    const seen = await trickle(patient!.port, head, 'x'.repeat(1000));
    const [answer] = answersIn(seen.received);
    expect(answer?.status).toBe(401);
    expect(JSON.parse(answer!.body.toString('utf8'))).toMatchObject({
      type: '/problems/bad-signature',
    });
    expect(seen.closedAfterMs).toBeGreaterThanOrEqual(REFUSED_BODY_MAX_MS - 100);
  });

  test('connections beyond ONEJOB_MAX_CONNECTIONS are closed as they arrive, and a freed place is taken again', async () => {
    const held: Socket[] = [];
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS + 2; i++) {
        const { outcome, socket } = await holdConnection(bounded!.port);
        outcomes.push(outcome);
        held.push(socket);
      }
      // One place may be held by this process's fetch pool (the health check).
      expect(outcomes.filter((o) => o === 'answered').length).toBeLessThanOrEqual(MAX_CONNECTIONS);
      expect(outcomes.slice(-2)).toEqual(['closed', 'closed']);
    } finally {
      for (const socket of held) socket.destroy();
    }
    const again = await eventually(
      () => holdConnection(bounded!.port),
      (next) => {
        next.socket.destroy();
        return next.outcome === 'answered';
      },
    );
    expect(again.outcome).toBe('answered');
  });
});

/** Opens a connection and asks for /healthz on it, keeping it open: answered, or closed unanswered. */
function holdConnection(port: number): Promise<{ outcome: 'answered' | 'closed'; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    socket.once('data', () => resolve({ outcome: 'answered', socket }));
    socket.once('close', () => resolve({ outcome: 'closed', socket }));
    socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
  });
}
