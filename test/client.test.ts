import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_ERROR_BODY_BYTES, OneJobClient, OneJobProblemError } from '../client/src';
import { TEST_TOKEN } from './support/identities';
import { startTestStack, type TestStack } from './support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** Records the Idempotency-Key of every request the client sends. */
function recordingFetch(options: { loseFirstResponse?: boolean } = {}) {
  const keys: Array<string | null> = [];
  let lost = false;
  const wrapped: typeof fetch = async (input, init) => {
    keys.push(new Headers(init?.headers).get('idempotency-key'));
    const response = await fetch(input, init);
    if (options.loseFirstResponse && !lost) {
      // The server did the work; the answer never reaches the caller (a dropped connection).
      lost = true;
      await response.arrayBuffer();
      throw new TypeError('fetch failed: socket closed before the response arrived');
    }
    return response;
  };
  return { fetch: wrapped, keys };
}

test('createJob and waitForJob run a job to success; the same key again is a replay of it', async () => {
  const client = new OneJobClient({ baseUrl: stack.apiUrl, token: TEST_TOKEN });
  const created = await client.createJob({
    type: 'summarize',
    input: { text: 'Typed clients help. Retries stay safe.' },
  });
  expect(created.replayed).toBe(false);
  const done = await client.waitForJob(created.job.id, { timeoutMs: 30_000 });
  expect(done).toMatchObject({
    id: created.job.id,
    status: 'succeeded',
    result: { summary: 'Typed clients help.' },
  });

  const again = await client.createJob({
    type: 'summarize',
    input: { text: 'Typed clients help. Retries stay safe.' },
    idempotencyKey: created.idempotencyKey,
  });
  expect(again).toMatchObject({ replayed: true, job: { id: created.job.id, status: 'succeeded' } });
  await expect(client.getJob(created.job.id)).resolves.toMatchObject({
    attempts: [{ state: 'succeeded' }],
  });
});

test('a lost response is retried with the same key and lands on the same single job', async () => {
  const recorder = recordingFetch({ loseFirstResponse: true });
  const client = new OneJobClient({
    baseUrl: stack.apiUrl,
    token: TEST_TOKEN,
    fetch: recorder.fetch,
    initialBackoffMs: 10,
  });
  const created = await client.createJob({
    type: 'summarize',
    input: { text: 'The first answer was lost. One job anyway.' },
  });
  expect(created.replayed).toBe(true);
  expect(recorder.keys).toHaveLength(2);
  expect(recorder.keys[0]).toBe(created.idempotencyKey);
  expect(recorder.keys[1]).toBe(created.idempotencyKey);
  const { rows } = await stack.pool.query(
    'SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = $1',
    [created.idempotencyKey],
  );
  expect(rows[0].n).toBe(1);
});

test('a 409 with x-should-retry: false is not retried and surfaces as a typed problem', async () => {
  const recorder = recordingFetch();
  const client = new OneJobClient({
    baseUrl: stack.apiUrl,
    token: TEST_TOKEN,
    fetch: recorder.fetch,
    initialBackoffMs: 10,
  });
  await client.createJob({
    type: 'summarize',
    input: { text: 'First intent. Kept.' },
    idempotencyKey: 'client-conflict',
  });
  const before = recorder.keys.length;
  const conflict = client.createJob({
    type: 'summarize',
    input: { text: 'Second intent. Refused.' },
    idempotencyKey: 'client-conflict',
  });
  await expect(conflict).rejects.toBeInstanceOf(OneJobProblemError);
  await expect(conflict).rejects.toMatchObject({
    status: 409,
    retryable: false,
    problem: { type: '/problems/idempotency-key-reuse' },
  });
  expect(recorder.keys.length - before).toBe(1);
});

test('listJobs pages through the caller’s jobs and filters by status', async () => {
  const client = new OneJobClient({ baseUrl: stack.apiUrl, token: TEST_TOKEN });
  for (let i = 0; i < 5; i++) {
    const { job } = await client.createJob({
      type: 'summarize',
      input: { text: `Paged job ${i}. Listed once.` },
    });
    await client.waitForJob(job.id, { timeoutMs: 30_000 });
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listJobs({ limit: 2, cursor, status: 'succeeded' });
    expect(page.jobs.length).toBeLessThanOrEqual(2);
    expect(page.jobs.every((job) => job.status === 'succeeded')).toBe(true);
    seen.push(...page.jobs.map((job) => job.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const { rows } = await stack.pool.query(
    `SELECT id FROM jobs WHERE owner_id = 'owner-a@example.com' AND terminal_status = 'succeeded' ORDER BY created_at DESC, id DESC`,
  );
  expect(seen).toEqual(rows.map((row: { id: string }) => row.id));
  await expect(client.listJobs({ status: 'failed' })).resolves.toEqual({
    jobs: [],
    nextCursor: null,
  });
  await expect(client.listJobs({ cursor: 'not-a-cursor' })).rejects.toMatchObject({
    status: 400,
    problem: { type: '/problems/invalid-cursor' },
  });
});

test('keys HTTP would alter in transit are refused before anything is sent', async () => {
  const client = new OneJobClient({ baseUrl: stack.apiUrl, token: TEST_TOKEN });
  await expect(
    client.createJob({ type: 'summarize', input: { text: 'x y' }, idempotencyKey: 'trailing ' }),
  ).rejects.toThrow(RangeError);
});

test('the client refuses plain http to another host unless told to allow it, and names the host', () => {
  const token = TEST_TOKEN;
  for (const baseUrl of [
    'http://api.example.com',
    'http://10.0.0.5:3000',
    'http://localhost.example.com',
    'http://127.0.0.1.example.com',
    'http://[::2]:3000',
  ])
    expect(() => new OneJobClient({ baseUrl, token })).toThrow(
      /refusing plain http to .+: the token would travel unencrypted/,
    );
  expect(() => new OneJobClient({ baseUrl: 'ftp://api.example.com', token })).toThrow(/https/);
  expect(() => new OneJobClient({ baseUrl: 'api.example.com', token })).toThrow(/not a URL/);
  // Loopback (this machine only), https anywhere, or plain http on purpose.
  for (const baseUrl of [
    'http://localhost:3000',
    'http://127.0.0.1:3000/',
    'http://127.8.9.10',
    'http://[::1]:3000',
    'https://api.example.com',
  ])
    expect(() => new OneJobClient({ baseUrl, token })).not.toThrow();
  expect(
    () => new OneJobClient({ baseUrl: 'http://api.internal', token, allowPlainHttp: true }),
  ).not.toThrow();
});

test('a refusal with an endless body is read up to 64 KiB, then the download is cancelled', async () => {
  // Not our API: a broken proxy in front of it, answering 502 with a body that never ends.
  let sent = 0;
  let finished: boolean | undefined;
  let refusal: Promise<unknown> = new Promise(() => undefined);
  const closed = new Promise<void>((resolve) => {
    const proxy = createServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = () => {
        // 256 MiB at most, so that a client that reads it all still ends.
        while (sent < 256 * 2 ** 20 && response.write(chunk)) sent += chunk.length;
        if (sent >= 256 * 2 ** 20) response.end();
      };
      response.on('drain', more);
      response.on('close', () => {
        finished = response.writableFinished;
        proxy.close();
        resolve();
      });
      more();
    });
    proxy.listen(0, '127.0.0.1', () => {
      const { port } = proxy.address() as AddressInfo;
      const client = new OneJobClient({
        baseUrl: `http://127.0.0.1:${port}`,
        token: TEST_TOKEN,
        maxRetries: 0,
      });
      refusal = client.getJob('any').catch((error: unknown) => error);
    });
  });
  await closed;
  const error = await refusal;
  expect(error).toBeInstanceOf(OneJobProblemError);
  expect((error as OneJobProblemError).problem).toMatchObject({ status: 502 });
  expect(((error as OneJobProblemError).problem.detail ?? '').length).toBeLessThanOrEqual(500);
  // The client hung up before the body's end, with far less than it downloaded.
  expect(finished).toBe(false);
  expect(sent).toBeLessThan(256 * 2 ** 20);
  expect(MAX_ERROR_BODY_BYTES).toBe(64 * 1024);
});
