import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderConfig } from '../src/providers/provider';
import { WebhookSendSlots } from '../src/service/webhookSendSlots';
import { OTHER_TOKEN } from './support/identities';
import { createJob, succeeded, summarizeBody, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * What one owner can make the service do with webhooks is bounded: endpoints per owner, live
 * secrets per endpoint, tries out at once per owner on a worker; an event's body is stored once,
 * whatever the number of endpoints; every list comes a page at a time.
 */
const ENDPOINTS_PER_OWNER = 6;
const SENDS_PER_OWNER = 3;
const providers = (url: string): ProviderConfig[] => [chatProvider(url, 'chat', 'sim-steady')];
const stack = useTestStack({
  providers,
  env: {
    ONEJOB_WEBHOOK_ENDPOINTS_PER_OWNER: String(ENDPOINTS_PER_OWNER),
    ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT: '3',
    ONEJOB_WEBHOOK_SENDS_PER_OWNER: String(SENDS_PER_OWNER),
  },
});

/** A receiver that holds every request it gets until released, and counts them. */
class HoldingReceiver {
  private readonly held: ServerResponse[] = [];
  /** Whether requests are held (else answered 204 at once). */
  holding = true;
  open = 0;
  mostOpen = 0;
  bodies: string[] = [];

  private constructor(readonly server: Server) {}

  static async start(): Promise<HoldingReceiver> {
    const receiver = new HoldingReceiver(createServer());
    receiver.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => receiver.received(body, response));
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  private received(body: string, response: ServerResponse): void {
    this.bodies.push(body);
    this.open += 1;
    this.mostOpen = Math.max(this.mostOpen, this.open);
    response.on('close', () => (this.open -= 1));
    if (this.holding) this.held.push(response);
    else response.writeHead(204).end();
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/${path}`;
  }

  /** Answers every held request 204. */
  release(): void {
    for (const response of this.held.splice(0)) response.writeHead(204).end();
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const register = (url: string, token?: string) =>
  stack.request('POST', '/v1/webhooks', { body: { url }, ...(token ? { token } : {}) });

async function deleteAll(token?: string): Promise<void> {
  const options = token ? { token } : {};
  const listed = (await (await stack.request('GET', '/v1/webhooks?limit=100', options)).json()) as {
    endpoints: Array<{ id: string }>;
  };
  for (const { id } of listed.endpoints)
    await stack.request('DELETE', `/v1/webhooks/${id}`, options);
}
afterEach(async () => {
  await deleteAll();
  await deleteAll(OTHER_TOKEN);
});

test('an owner registers at most its cap of endpoints: the one past it is a 409 problem that registers nothing, other owners are not counted, and a deleted endpoint frees its place', async () => {
  for (let i = 0; i < ENDPOINTS_PER_OWNER; i++)
    expect((await register(`https://hooks.example/${i}`)).status).toBe(201);
  const refused = await register('https://hooks.example/one-too-many');
  expect(refused.status).toBe(409);
  expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(await refused.json()).toMatchObject({
    type: '/problems/too-many-webhook-endpoints',
    endpointsPerOwner: ENDPOINTS_PER_OWNER,
  });
  const listed = (await (await stack.request('GET', '/v1/webhooks?limit=100')).json()) as {
    endpoints: Array<{ id: string; url: string }>;
  };
  expect(listed.endpoints).toHaveLength(ENDPOINTS_PER_OWNER);
  expect(listed.endpoints.map((e) => e.url)).not.toContain('https://hooks.example/one-too-many');
  // Another owner's endpoints are its own count.
  expect((await register('https://hooks.example/other', OTHER_TOKEN)).status).toBe(201);
  expect((await stack.request('DELETE', `/v1/webhooks/${listed.endpoints[0]!.id}`)).status).toBe(
    204,
  );
  expect((await register('https://hooks.example/in-its-place')).status).toBe(201);
});

test('registrations racing for the last places of the cap: exactly as many as there were places are registered', async () => {
  for (let i = 0; i < ENDPOINTS_PER_OWNER - 2; i++)
    expect((await register(`https://hooks.example/${i}`)).status).toBe(201);
  const raced = await Promise.all(
    Array.from({ length: 6 }, (_, i) => register(`https://hooks.example/race-${i}`)),
  );
  const statuses = raced.map((r) => r.status).sort();
  expect(statuses).toEqual([201, 201, 409, 409, 409, 409]);
  const listed = (await (await stack.request('GET', '/v1/webhooks?limit=100')).json()) as {
    endpoints: unknown[];
  };
  expect(listed.endpoints).toHaveLength(ENDPOINTS_PER_OWNER);
});

test('an endpoint has at most its cap of live secrets: a rotation past it is a 409 with Retry-After that rotates nothing, and a replaced secret that expired at once leaves its place', async () => {
  const created = (await (await register('https://hooks.example/rotated')).json()) as {
    id: string;
  };
  const rotate = (seconds?: number) =>
    stack.request('POST', `/v1/webhooks/${created.id}/secret-rotations`, {
      body: seconds === undefined ? {} : { previousSecretExpiresInSeconds: seconds },
    });
  // Replaced secrets that expire at once never count.
  for (let i = 0; i < 5; i++) expect((await rotate(0)).status).toBe(200);
  // The current secret and two replaced ones still live: three, the cap.
  expect((await rotate()).status).toBe(200);
  expect((await rotate()).status).toBe(200);
  const live = async () =>
    (
      await stack.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_secrets
          WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())`,
        [created.id],
      )
    ).rows[0]!.n;
  expect(await live()).toBe(3);
  const refused = await rotate();
  expect(refused.status).toBe(409);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await refused.json()).toMatchObject({
    type: '/problems/too-many-live-secrets',
    liveSecretsPerEndpoint: 3,
  });
  expect(await live()).toBe(3);
});

test('endpoints and deliveries are listed a page at a time: the pages hold each item once, in order, and a bad cursor is a 400 problem', async () => {
  const receiver = await HoldingReceiver.start();
  try {
    const urls = Array.from({ length: 5 }, (_, i) => receiver.url(`paged-${i}`));
    for (const url of urls) expect((await register(url)).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await (
        await stack.request(
          'GET',
          `/v1/webhooks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        )
      ).json()) as { endpoints: Array<{ url: string }>; nextCursor: string | null };
      expect(page.endpoints.length).toBeLessThanOrEqual(2);
      seen.push(...page.endpoints.map((e) => e.url));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(urls);
    expect(pages).toBe(3);

    const job = await createJob(stack, summarizeBody(['chat']));
    await untilJob(stack, job.id, succeeded);
    receiver.release();
    const all = async () => {
      const ids: string[] = [];
      let after: string | null = null;
      do {
        const page = (await (
          await stack.request(
            'GET',
            `/v1/jobs/${job.id}/webhook-deliveries?limit=2${after ? `&cursor=${encodeURIComponent(after)}` : ''}`,
          )
        ).json()) as { deliveries: Array<{ id: string }>; nextCursor: string | null };
        ids.push(...page.deliveries.map((d) => d.id));
        after = page.nextCursor;
      } while (after);
      return ids;
    };
    const ids = await all();
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);

    const bad = await stack.request('GET', '/v1/webhooks?cursor=bm90LWEtY3Vyc29y');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: '/problems/invalid-cursor' });
  } finally {
    await receiver.stop();
  }
});

test("an event's body is stored once whatever the number of endpoints, every endpoint is sent the same bytes, and an owner's tries out at once on a worker never pass its bound", async () => {
  const receiver = await HoldingReceiver.start();
  try {
    for (let i = 0; i < ENDPOINTS_PER_OWNER; i++)
      expect((await register(receiver.url(`fan-${i}`))).status).toBe(201);
    const job = await createJob(stack, summarizeBody(['chat']));
    await untilJob(stack, job.id, succeeded);
    // The receiver holds every try: the sender fills the owner's tries up to its bound.
    await eventually(
      async () => receiver.open,
      (open) => open === SENDS_PER_OWNER,
    );
    // From now on each try is answered at once; the rest are sent, never more at once than
    // the bound (the receiver counts the requests it has open, answered or held).
    receiver.holding = false;
    receiver.release();
    await eventually(
      async () =>
        (
          await stack.pool.query<{ delivered: number }>(
            `SELECT count(*)::int AS delivered FROM webhook_deliveries
              WHERE job_id = $1 AND state = 'delivered'`,
            [job.id],
          )
        ).rows[0]!.delivered,
      (delivered) => delivered === ENDPOINTS_PER_OWNER,
    );
    expect(receiver.mostOpen).toBe(SENDS_PER_OWNER);
    expect(receiver.bodies).toHaveLength(ENDPOINTS_PER_OWNER);
    expect(new Set(receiver.bodies).size).toBe(1);
    const { rows: stored } = await stack.pool.query<{ bodies: number; own: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_event_bodies WHERE job_id = $1) AS bodies,
              (SELECT count(*)::int FROM webhook_deliveries
                WHERE job_id = $1 AND body IS NOT NULL) AS own`,
      [job.id],
    );
    expect(stored[0]).toEqual({ bodies: 1, own: 0 });
  } finally {
    await receiver.stop();
  }
});

describe('the send slots of one worker process', () => {
  test('an owner takes at most its bound, and the process at most its own across owners; a take past either gets none once its wait is over', async () => {
    const slots = new WebhookSendSlots(5, 3);
    expect(await slots.take('a', 10, 0)).toBe(3);
    expect(await slots.take('a', 1, 0)).toBe(0);
    expect(await slots.take('b', 10, 0)).toBe(2);
    expect(await slots.take('c', 1, 0)).toBe(0);
    expect(slots.inUse().total).toBe(5);
    slots.give('a', 3);
    expect(await slots.take('c', 10, 0)).toBe(3);
    expect(slots.inUse().byOwner.get('a')).toBeUndefined();
  });

  test('a take waiting for a slot gets it when one is given back', async () => {
    const slots = new WebhookSendSlots(2, 2);
    expect(await slots.take('a', 2, 0)).toBe(2);
    const waiting = slots.take('b', 1, 60_000);
    slots.give('a', 1);
    expect(await waiting).toBe(1);
    expect(slots.inUse()).toMatchObject({ total: 2 });
  });
});
