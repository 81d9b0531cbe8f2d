import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPERATOR_TOKEN } from './support/identities';
import { createJob, summarizeBody, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';

/**
 * An endpoint's breaker is visible where its owner and operators read the endpoint (failures in
 * a row, held until, why), and /metrics reports the webhook backlog, tries by outcome, fan-out
 * and the endpoints held, with no label per endpoint.
 */
const BREAKER_FAILURES = 2;
let stack: TestStack;
let server: Server;
let status = 500;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stack = await startTestStack({
    providers: (url) => [chatProvider(url, 'chat', 'sim-steady')],
    env: {
      ONEJOB_WEBHOOK_FIRST_RETRY_MS: '200',
      ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS: '1000',
      ONEJOB_WEBHOOK_BREAKER_FAILURES: String(BREAKER_FAILURES),
      // Held for an hour: the test moves the hold into the past itself when it wants it over.
      ONEJOB_WEBHOOK_BREAKER_FIRST_HOLD_MS: '3600000',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

interface Breaker {
  state: string;
  failuresInARow: number;
  heldUntil: string | null;
  reason: string | null;
}

async function ownersView(id: string): Promise<{ one: Breaker; listed: Breaker | undefined }> {
  const one = (await (await stack.request('GET', `/v1/webhooks/${id}`)).json()) as {
    breaker: Breaker;
  };
  const list = (await (await stack.request('GET', '/v1/webhooks')).json()) as {
    endpoints: Array<{ id: string; breaker: Breaker }>;
  };
  return { one: one.breaker, listed: list.endpoints.find((e) => e.id === id)?.breaker };
}

async function operatorsView(id: string): Promise<Breaker | undefined> {
  const list = (await (
    await stack.request('GET', '/v1/operator/webhooks', { token: OPERATOR_TOKEN })
  ).json()) as { endpoints: Array<{ id: string; breaker: Breaker }> };
  return list.endpoints.find((e) => e.id === id)?.breaker;
}

const metrics = async () => (await fetch(`${stack.apiUrl}/metrics`)).text();
function value(text: string, metric: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${metric} `));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

test('an endpoint’s breaker shows to its owner and to operators as it opens, holds and closes, and /metrics counts the tries, the backlog and the endpoints held', async () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const registered = await stack.request('POST', '/v1/webhooks', { body: { url } });
  expect(registered.status).toBe(201);
  const { id } = (await registered.json()) as { id: string };
  const closed = { state: 'closed', failuresInARow: 0, heldUntil: null, reason: null };
  expect(await ownersView(id)).toEqual({ one: closed, listed: closed });
  expect(await operatorsView(id)).toEqual(closed);

  const job = await createJob(stack, summarizeBody(['chat']));
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  const held = await eventually(
    () => ownersView(id),
    (view) => view.one.state === 'open',
  );
  expect(held.listed).toEqual(held.one);
  expect(held.one.failuresInARow).toBe(BREAKER_FAILURES);
  expect(held.one.reason).toBe(
    `${BREAKER_FAILURES} tries in a row not answered 2xx, the last answered 500`,
  );
  // An hour, less its jitter.
  expect(Date.parse(held.one.heldUntil!)).toBeGreaterThan(Date.now() + 10 * 60_000);
  expect(await operatorsView(id)).toEqual(held.one);

  const during = await metrics();
  expect(value(during, 'onejob_webhook_endpoints_held')).toBe(1);
  expect(value(during, 'onejob_webhook_tries_total{outcome="refused"}')).toBe(BREAKER_FAILURES);
  expect(value(during, 'onejob_webhook_deliveries{state="pending"}')).toBe(1);
  expect(value(during, 'onejob_webhook_oldest_pending_seconds')).toBeGreaterThan(0);
  expect(value(during, 'onejob_webhook_deliveries_written_total')).toBe(1);
  expect(value(during, 'onejob_webhook_events_written_total')).toBe(1);
  expect(during).not.toContain(id);

  // The hold is over: the next try is a probe, which the receiver now answers.
  status = 204;
  await stack.pool.query(
    `UPDATE webhook_endpoint_health SET held_until = now() - interval '1 second'
      WHERE endpoint_id = $1`,
    [id],
  );
  const after = await eventually(
    () => ownersView(id),
    (view) => view.one.state !== 'open',
  );
  expect(['half_open', 'closed']).toContain(after.one.state);
  expect(
    await eventually(
      async () => (await ownersView(id)).one,
      (b) => b.state === 'closed',
    ),
  ).toEqual(closed);
  const done = await eventually(
    metrics,
    (text) => value(text, 'onejob_webhook_deliveries{state="delivered"}') === 1,
  );
  expect(value(done, 'onejob_webhook_deliveries{state="pending"}')).toBe(0);
  expect(value(done, 'onejob_webhook_tries_total{outcome="delivered"}')).toBe(1);
  expect(value(done, 'onejob_webhook_endpoints_held')).toBe(0);
  expect(value(done, 'onejob_webhook_oldest_pending_seconds')).toBe(0);
});
