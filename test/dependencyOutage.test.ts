import { signCallback } from '../src/api/signatures';
import { startLinkProxy, type LinkProxy } from '../tools/chaos/linkProxy';
import { postgresAddress, throughPort } from './support/database';
import { CALLBACK_SECRET, OPERATOR_TOKEN } from './support/identities';
import { createJob, freshKey, untilJob } from './support/jobs';
import { chatProvider, payProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';

/**
 * When PostgreSQL cannot be reached, the API says so (503 problem+json with Retry-After) and
 * loses nothing: never "no such job", never a bare 500.
 */
let stack: TestStack;
let proxy: LinkProxy;
beforeAll(async () => {
  proxy = await startLinkProxy(postgresAddress());
  stack = await startTestStack({
    providers: (url) => [
      chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 10_000 }),
      // A provider that reports by signed callback: its callbacks reach the database.
      payProvider(url, 'pay', { callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET' }),
    ],
    // The API reaches PostgreSQL through the proxy; the worker directly.
    apiDatabaseUrl: (databaseUrl) => throughPort(databaseUrl, proxy.port),
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

  await proxy.breakWith({ kind: 'refuse' });
  const key = freshKey('during-outage');
  const report = JSON.stringify({ attemptId: `${job.id}:1`, status: 'failed', error: 'no' });
  const operatorPost = (path: string, body: unknown) =>
    stack.request('POST', `/v1/operator${path}`, { body, token: OPERATOR_TOKEN });
  const asked: Record<string, Promise<Response>> = {
    'POST /v1/jobs': stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': key },
      body,
    }),
    'GET /v1/jobs/{id}': stack.request('GET', `/v1/jobs/${job.id}`),
    'GET /v1/jobs': stack.request('GET', '/v1/jobs'),
    'POST /v1/jobs/{id}/attempts': stack.request('POST', `/v1/jobs/${job.id}/attempts`, {
      body: {},
    }),
    'POST /v1/operator/jobs/{id}/cancel': operatorPost(`/jobs/${job.id}/cancel`, { reason: 'x' }),
    'POST /v1/operator/attempts/{attemptId}/resolve': operatorPost(
      `/attempts/${job.id}:1/resolve`,
      { outcome: 'failed', reason: 'x' },
    ),
    'POST /v1/operator/jobs/{id}/release-key': operatorPost(`/jobs/${job.id}/release-key`, {
      reason: 'x',
    }),
    // Signed, so it gets past the signature check to the database.
    'POST /v1/callbacks/{provider}': fetch(`${stack.apiUrl}/v1/callbacks/pay`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'onejob-signature': signCallback(CALLBACK_SECRET, report),
      },
      body: report,
    }),
  };
  const answers = Object.fromEntries(
    await Promise.all(
      Object.entries(asked).map(async ([route, answer]) => {
        const response = await answer;
        const problem = (await response.json()) as { type?: string };
        return [
          route,
          {
            status: response.status,
            problemJson: /^application\/problem\+json/.test(
              response.headers.get('content-type') ?? '',
            ),
            retryAfterSeconds: /^\d+$/.test(response.headers.get('retry-after') ?? ''),
            type: problem.type,
          },
        ] as const;
      }),
    ),
  );
  const outage = {
    status: 503,
    problemJson: true,
    retryAfterSeconds: true,
    type: '/problems/service-unavailable',
  };
  expect(answers).toEqual(Object.fromEntries(Object.keys(asked).map((route) => [route, outage])));

  await proxy.heal();
  // The create that met the outage never happened; its retry with the same key makes the job.
  const retried = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  expect(retried.status).toBe(201);
  expect((await stack.request('GET', `/v1/jobs/${job.id}`)).status).toBe(200);
});
