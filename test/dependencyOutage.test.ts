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

/** The routes outside /v1, which answer without the database (readyz reports it as a check). */
const OWN_ROUTES = ['GET /healthz', 'GET /metrics', 'GET /problems/{type}', 'GET /readyz'];

/** What a request needs besides its path to get past validation to the database. */
interface Ask {
  body?: unknown;
  headers?: Record<string, string>;
}

test('with the database down every route of the OpenAPI document answers 503 problem+json with Retry-After, and a retry afterwards loses nothing', async () => {
  const body = {
    type: 'summarize',
    input: { text: 'Written before the outage. Read after it.' },
    providers: ['chat'],
  };
  const job = await createJob(stack, body);
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  // An endpoint of its owner, for the webhook routes to name (it takes no event these jobs send).
  const registered = await stack.request('POST', '/v1/webhooks', {
    body: { url: 'http://127.0.0.1:9/outage', events: ['job.needs_operator'] },
  });
  expect(registered.status).toBe(201);
  const endpoint = ((await registered.json()) as { id: string }).id;
  // Every operation the API documents, from its own document.
  const document = (await (await fetch(`${stack.apiUrl}/docs/json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(operations.filter((op) => !op.split(' ')[1]!.startsWith('/v1/')).sort()).toEqual(
    OWN_ROUTES,
  );
  const routes = operations.filter((op) => !OWN_ROUTES.includes(op));

  const key = freshKey('during-outage');
  const report = JSON.stringify({ attemptId: `${job.id}:1`, status: 'failed', error: 'no' });
  const reason = { reason: 'x' };
  const asks: Record<string, Ask> = {
    'POST /v1/jobs': { headers: { 'idempotency-key': key }, body },
    'POST /v1/jobs/{id}/attempts': { body: {} },
    'POST /v1/jobs/{id}/cancel': { body: reason },
    'POST /v1/operator/attempts/{attemptId}/resolve': {
      body: { outcome: 'failed', reason: 'x' },
    },
    'POST /v1/operator/jobs/{id}/cancel': { body: reason },
    'POST /v1/operator/jobs/{id}/release-key': { body: reason },
    'POST /v1/operator/webhooks/{id}/delete': { body: reason },
    'POST /v1/operator/webhooks/{id}/disable': { body: reason },
    'POST /v1/operator/webhooks/{id}/enable': { body: reason },
    'POST /v1/webhooks': { body: { url: 'http://127.0.0.1:9/during-outage' } },
    'POST /v1/webhooks/{id}/secret-rotations': { body: {} },
    'POST /v1/webhooks/{id}/redeliver': { body: { failedSince: '2026-01-01T00:00:00Z' } },
    'POST /v1/operator/webhooks/{id}/redeliver': {
      body: { failedSince: '2026-01-01T00:00:00Z', ...reason },
    },
    'PUT /v1/operator/budgets/{owner}': { body: { currency: 'USD', amount: 1, ...reason } },
    'DELETE /v1/operator/budgets/{owner}': { body: reason },
    // Signed, so it gets past the signature check to the database.
    'POST /v1/callbacks/{provider}': {
      headers: { 'onejob-signature': signCallback(CALLBACK_SECRET, report) },
      body: report,
    },
  };
  // Every ask is for a documented route (a route renamed leaves none behind).
  expect(Object.keys(asks).filter((route) => !routes.includes(route))).toEqual([]);
  /** The path with its parameters filled: the job, its attempt, the endpoint, the provider, an owner. */
  const filled = (path: string): string =>
    path
      .replace('/budgets/{owner}/changes', '/budgets/someone/changes')
      .replace('/budgets/{owner}', '/budgets/someone?period=day')
      .replace('{attemptId}', `${job.id}:1`)
      .replace('{provider}', 'pay')
      .replace('{id}', /^\/v1\/(operator\/)?webhooks\//.test(path) ? endpoint : job.id);

  await proxy.breakWith({ kind: 'refuse' });
  const asked = routes.map((route) => {
    const [method, path] = route.split(' ') as [string, string];
    const { body: sent, headers } = asks[route] ?? {};
    return stack.request(method, filled(path), {
      ...(sent === undefined ? {} : { body: sent }),
      ...(headers ? { headers } : {}),
      ...(path.startsWith('/v1/operator/') ? { token: OPERATOR_TOKEN } : {}),
    });
  });
  const answers = Object.fromEntries(
    await Promise.all(
      asked.map(async (answer, i) => {
        const response = await answer;
        const problem = (await response.json()) as { type?: string };
        return [
          routes[i]!,
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
  expect(answers).toEqual(Object.fromEntries(routes.map((route) => [route, outage])));

  await proxy.heal();
  // The create that met the outage never happened; its retry with the same key makes the job.
  const retried = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  expect(retried.status).toBe(201);
  expect((await stack.request('GET', `/v1/jobs/${job.id}`)).status).toBe(200);
  // Nor did the delete, the disable or the rotation: the endpoint is as it was.
  const kept = await stack.request('GET', `/v1/webhooks/${endpoint}`);
  expect(kept.status).toBe(200);
  expect(await kept.json()).toMatchObject({ id: endpoint, disabledAt: null });
});
