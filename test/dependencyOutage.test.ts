import { OPERATOR_TOKEN } from './support/identities';
import { createJob, freshKey, untilJob } from './support/jobs';
import { chatProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';
import { startTcpProxy, type TcpProxy } from './tcpProxy';

/**
 * When PostgreSQL cannot be reached, the API says so (503 problem+json with Retry-After) and
 * loses nothing: never "no such job", never a bare 500.
 */
let stack: TestStack;
let proxy: TcpProxy;
beforeAll(async () => {
  proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  stack = await startTestStack({
    providers: (url) => [chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 10_000 })],
    // The API reaches PostgreSQL through the proxy; the worker directly.
    apiDatabaseUrl: (databaseUrl) => {
      const url = new URL(databaseUrl);
      url.host = `127.0.0.1:${proxy.port}`;
      return url.toString();
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

test('with the database down every route answers 503 problem+json with Retry-After, and a retry afterwards loses nothing', async () => {
  const body = {
    type: 'summarize',
    input: { text: 'Written before the outage. Read after it.' },
    providers: ['chat'],
  };
  const job = await createJob(stack, body);
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');

  await proxy.cut();
  const key = freshKey('during-outage');
  const answers = await Promise.all([
    stack.request('POST', '/v1/jobs', { headers: { 'idempotency-key': key }, body }),
    stack.request('GET', `/v1/jobs/${job.id}`),
    stack.request('GET', '/v1/jobs'),
    stack.request('POST', `/v1/jobs/${job.id}/attempts`, { body: {} }),
    stack.request('POST', `/v1/operator/jobs/${job.id}/cancel`, {
      body: { reason: 'x' },
      token: OPERATOR_TOKEN,
    }),
    stack.request('POST', `/v1/operator/attempts/${job.id}:1/resolve`, {
      body: { outcome: 'failed', reason: 'x' },
      token: OPERATOR_TOKEN,
    }),
  ]);
  for (const answer of answers) {
    expect(answer.status).toBe(503);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await answer.json()).toMatchObject({ type: '/problems/service-unavailable' });
  }

  await proxy.restore();
  // The create that met the outage never happened; its retry with the same key makes the job.
  const retried = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  expect(retried.status).toBe(201);
  expect((await stack.request('GET', `/v1/jobs/${job.id}`)).status).toBe(200);
});
