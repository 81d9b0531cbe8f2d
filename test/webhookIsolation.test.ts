import { randomUUID } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { claimNextDeliveries } from '../src/db/webhookDeliveryClaims';
import { failPendingDeliveries, recordDeliveryTry } from '../src/db/webhookDeliveryTries';
import { DEFAULTS } from '../src/domain/defaults';
import { parseSecretKeys } from '../src/domain/secretSealing';
import { SilentReceiver } from '../tools/webhooks/silentReceiver';
import { holdTransaction } from './support/barriers';
import {
  LONGEST_OWNER_TOKEN,
  OTHER_TOKEN,
  SPARE_TOKEN,
  TEST_SECRET_KEYS,
  TEST_TOKEN,
  TRICK_OWNERS,
} from './support/identities';
import { freshKey, summarizeBody, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';

/**
 * One owner's webhooks cannot hold up another's: sends have their own task queue and slots, a
 * receiver that never answers holds at most its owner's send slots, a dead endpoint is held by
 * its breaker (a probe, not a try per event), names resolve with a bound off the thread pool,
 * and the bookkeeping of tries holds under races (claims with tokens, late tries, two 410s).
 */
const SENDS_PER_OWNER = 4;
const BREAKER_FAILURES = 3;

/** A receiver answering every request with `status`, and when each job's event came. */
class CountingReceiver {
  status = 204;
  readonly arrived = new Map<string, number>();
  requests = 0;
  private constructor(readonly server: Server) {}

  static async start(): Promise<CountingReceiver> {
    const receiver = new CountingReceiver(createServer());
    receiver.server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        receiver.requests += 1;
        if (receiver.status < 300) {
          const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            data: { id: string };
          };
          if (!receiver.arrived.has(data.id)) receiver.arrived.set(data.id, performance.now());
        }
        response.writeHead(receiver.status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A name server that takes every query and never answers. */
let silentDns: UdpSocket;
let dnsQueries = 0;
let stack: TestStack;

beforeAll(async () => {
  silentDns = createSocket('udp4');
  silentDns.on('message', () => (dnsQueries += 1));
  await new Promise<void>((resolve) => silentDns.bind(0, '127.0.0.1', resolve));
  stack = await startTestStack({
    providers: (url) => [chatProvider(url, 'chat', 'sim-steady')],
    env: {
      ONEJOB_WEBHOOK_SENDS_PER_OWNER: String(SENDS_PER_OWNER),
      ONEJOB_WEBHOOK_FIRST_RETRY_MS: '200',
      ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS: '1000',
      ONEJOB_WEBHOOK_BREAKER_FAILURES: String(BREAKER_FAILURES),
      // Held for an hour: a test that wants the hold over moves it into the past itself.
      ONEJOB_WEBHOOK_BREAKER_FIRST_HOLD_MS: '3600000',
      ONEJOB_WEBHOOK_DNS_SERVERS: `127.0.0.1:${(silentDns.address() as AddressInfo).port}`,
      ONEJOB_WEBHOOK_DNS_TIMEOUT_MS: '1000',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  silentDns?.close();
});

async function register(token: string, url: string): Promise<Response> {
  return stack.request('POST', '/v1/webhooks', { token, body: { url } });
}

async function create(token: string): Promise<JobView> {
  const response = await stack.request('POST', '/v1/jobs', {
    token,
    headers: { 'idempotency-key': freshKey('iso') },
    body: summarizeBody(['chat']),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as JobView;
}

async function untilEnded(token: string, id: string): Promise<JobView> {
  return eventually(
    async () => (await (await stack.request('GET', `/v1/jobs/${id}`, { token })).json()) as JobView,
    (job) => job.status === 'succeeded',
  );
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** Jobs of the owner made at once: how long each took to end, and its event to arrive. */
async function timedJobs(receiver: CountingReceiver, count: number) {
  const runs = await Promise.all(
    Array.from({ length: count }, async () => {
      const started = performance.now();
      const job = await create(TEST_TOKEN);
      await untilEnded(TEST_TOKEN, job.id);
      const ended = performance.now() - started;
      await eventually(
        async () => receiver.arrived.get(job.id),
        (at) => at !== undefined,
      );
      return { ended, delivered: receiver.arrived.get(job.id)! - started };
    }),
  );
  return {
    endedMs: median(runs.map((r) => r.ended)),
    deliveredMs: median(runs.map((r) => r.delivered)),
  };
}

test('an owner whose endpoints never answer holds only its own send slots: another owner’s jobs end and their events arrive meanwhile', async () => {
  const receiver = await CountingReceiver.start();
  const silent = await SilentReceiver.start();
  try {
    expect((await register(TEST_TOKEN, receiver.url)).status).toBe(201);
    const before = await timedJobs(receiver, 6);

    // The abusive owner: the cap's worth of endpoints that never answer, and one refused.
    for (let n = 0; n < DEFAULTS.webhookEndpointsPerOwner; n += 1)
      expect((await register(OTHER_TOKEN, silent.url(`hook-${n}`))).status).toBe(201);
    const past = await register(OTHER_TOKEN, silent.url('one-too-many'));
    expect(past.status).toBe(409);
    expect(((await past.json()) as { type: string }).type).toBe(
      '/problems/too-many-webhook-endpoints',
    );
    // Its jobs end as fast as they are made, each with an event for every endpoint.
    const abusive = await Promise.all(Array.from({ length: 10 }, () => create(OTHER_TOKEN)));
    for (const job of abusive) await untilEnded(OTHER_TOKEN, job.id);
    // Its tries are out, held by receivers that never answer, as many as its bound allows.
    await eventually(
      async () => silent.open,
      (open) => open === SENDS_PER_OWNER,
    );

    const during = await timedJobs(receiver, 6);
    // While the other owner's jobs ran, the abusive owner's tries were still held, never more
    // of them than its bound.
    expect(silent.open).toBeGreaterThan(0);
    expect(silent.mostOpen).toBeLessThanOrEqual(SENDS_PER_OWNER);
    console.log(
      `another owner's webhooks never answering: job end p50 ${during.endedMs.toFixed(0)} ms vs ${before.endedMs.toFixed(0)} ms alone (${(during.endedMs / before.endedMs).toFixed(2)}×), event arrival p50 ${during.deliveredMs.toFixed(0)} ms vs ${before.deliveredMs.toFixed(0)} ms (${(during.deliveredMs / before.deliveredMs).toFixed(2)}×)`,
    );
  } finally {
    await silent.stop();
    await receiver.stop();
  }
});

test('an endpoint that keeps failing is held by its breaker: its other events are not tried one by one, and once the hold is over one probe that succeeds lets them all through', async () => {
  const token = TRICK_OWNERS.a;
  const receiver = await CountingReceiver.start();
  receiver.status = 500;
  try {
    const registered = await register(token, receiver.url);
    expect(registered.status).toBe(201);
    const endpoint = (await registered.json()) as { id: string };
    const jobs = await Promise.all(Array.from({ length: 10 }, () => create(token)));
    const health = () =>
      stack.pool.query<{ failures: number; held: boolean; reason: string | null }>(
        `SELECT failures, held_until > now() AS held, held_reason AS reason
           FROM webhook_endpoint_health WHERE endpoint_id = $1`,
        [endpoint.id],
      );
    await eventually(
      async () => (await health()).rows[0]?.held,
      (held) => held === true,
    );
    // Every job's sender has had a round since, and found the endpoint held.
    for (const job of jobs)
      await eventually(
        async () =>
          (await stack.temporal.workflow.getHandle(`webhooks/${job.id}/job.succeeded`).describe())
            .raw.pendingActivities?.[0]?.lastFailure?.message ?? '',
        (message) => message.includes('breaker holds'),
      );
    const { rows } = await stack.pool.query<{ tries: number }>(
      'SELECT coalesce(sum(tries), 0)::int AS tries FROM webhook_deliveries WHERE endpoint_id = $1',
      [endpoint.id],
    );
    // The tries made are those before the breaker opened (and those already out then), far
    // from one per event; each was counted.
    expect(rows[0]!.tries).toBeLessThanOrEqual(BREAKER_FAILURES + SENDS_PER_OWNER - 1);
    expect(rows[0]!.tries).toBe((await health()).rows[0]!.failures);
    expect(receiver.requests).toBe(rows[0]!.tries);
    expect((await health()).rows[0]!.reason).toMatch(/answered 500/);

    // The receiver is back, and the hold over (moved into the past, for the test's sake).
    receiver.status = 204;
    await stack.pool.query(
      `UPDATE webhook_endpoint_health SET held_until = now() - interval '1 second'
        WHERE endpoint_id = $1`,
      [endpoint.id],
    );
    await eventually(
      async () => jobs.filter((job) => receiver.arrived.has(job.id)).length,
      (n) => n === jobs.length,
    );
    expect((await health()).rows).toEqual([]);
  } finally {
    await receiver.stop();
  }
});

test('a name server that never answers costs a registration at most its bound, and jobs keep ending while names hang', async () => {
  const token = TRICK_OWNERS['a/b'];
  // An API as deployments run it (names are resolved to refuse internal targets), whose names
  // hang for 10 s: long enough to see what it does meanwhile.
  const api = await stack.startExtraApi({
    ONEJOB_WEBHOOK_INTERNAL_TARGETS: 'deny',
    ONEJOB_WEBHOOK_DNS_TIMEOUT_MS: '10000',
  });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const queriesBefore = dnsQueries;
  let answered = 0;
  const registrations = Array.from({ length: 8 }, (_, n) =>
    fetch(`${api.url}/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `https://hooks-${n}.never-answers.test/in` }),
    }).then((answer) => {
      answered += 1;
      return answer;
    }),
  );
  // Every registration is waiting on the silent name server (more than libuv's four threads)...
  await eventually(
    async () => dnsQueries - queriesBefore,
    (sent) => sent >= 8,
  );
  // ...and meanwhile the same process makes a job and reads a file (libuv's pool does that).
  const made = await fetch(`${api.url}/v1/jobs`, {
    method: 'POST',
    headers: { ...headers, 'idempotency-key': freshKey('dns') },
    body: JSON.stringify(summarizeBody(['chat'])),
  });
  expect(made.status).toBe(201);
  expect((await fetch(`${api.url}/docs/static/swagger-ui.css`)).status).toBe(200);
  expect(answered).toBe(0);
  const job = (await made.json()) as JobView;
  await untilEnded(token, job.id);
  // A name that does not resolve is no internal target: each is registered, once the bound passed.
  for (const answer of await Promise.all(registrations)) expect(answer.status).toBe(201);
  await api.stop();
  // The next job's event is tried, and its try says the name did not resolve in time.
  const next = await create(token);
  await untilEnded(token, next.id);
  const tries = await eventually(
    async () =>
      (
        await stack.pool.query<{ error: string | null }>(
          `SELECT t.error FROM webhook_delivery_tries t
             JOIN webhook_deliveries d ON d.id = t.delivery_id WHERE d.job_id = $1`,
          [next.id],
        )
      ).rows,
    (rows) => rows.length > 0,
  );
  expect(tries[0]!.error).toMatch(/no name server answered/);
});

test('two 410s of one endpoint recorded at once both keep their try: the endpoint is locked first, so neither waits on the other', async () => {
  const token = TRICK_OWNERS['a:b'];
  const receiver = await CountingReceiver.start();
  receiver.status = 410;
  try {
    const registered = await register(token, receiver.url);
    const endpoint = (await registered.json()) as { id: string };
    // The endpoint is held by the test: both records of a 410 wait for it together.
    const barrier = await holdTransaction(
      stack,
      `SELECT 1 FROM webhook_endpoints WHERE id = '${endpoint.id}' FOR NO KEY UPDATE`,
    );
    const jobs = [await create(token), await create(token)];
    await barrier.blocked('', 2);
    await barrier.release();
    const deliveries = await eventually(
      async () =>
        (
          await stack.pool.query<{ tries: number; state: string }>(
            'SELECT tries, state FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY position',
            [endpoint.id],
          )
        ).rows,
      (rows) => rows.length === 2 && rows.every((row) => row.state !== 'pending'),
    );
    expect(deliveries).toEqual([
      { tries: 1, state: 'abandoned' },
      { tries: 1, state: 'abandoned' },
    ]);
    expect(receiver.requests).toBe(2);
    expect(jobs).toHaveLength(2);
  } finally {
    await receiver.stop();
  }
});

test('a try is recorded under its claim: a holder whose lease ran out frees no other holder’s claim, and a try landing after its delivery ended is still kept', async () => {
  const silent = await SilentReceiver.start();
  try {
    const registered = await register(SPARE_TOKEN, silent.url('slow'));
    const endpoint = (await registered.json()) as { id: string };
    const job = await create(SPARE_TOKEN);
    // The sender's try is out, held by a receiver that does not answer.
    await eventually(
      async () => silent.requests,
      (n) => n === 1,
    );
    const [delivery] = (
      await stack.pool.query<{ id: string }>(
        'SELECT id FROM webhook_deliveries WHERE job_id = $1',
        [job.id],
      )
    ).rows;
    // Its lease runs out (moved into the past, for the test's sake), and another claim takes it.
    await stack.pool.query(
      `UPDATE webhook_deliveries SET claimed_until = now() - interval '1 second' WHERE id = $1`,
      [delivery!.id],
    );
    const keys = parseSecretKeys(TEST_SECRET_KEYS);
    const { claimed } = await claimNextDeliveries(stack.pool, job.id, 60_000, 1, [], keys);
    expect(claimed.map((d) => d.id)).toEqual([delivery!.id]);
    const row = () =>
      stack.pool
        .query<{ claim_token: string | null; state: string; tries: number }>(
          'SELECT claim_token, state, tries FROM webhook_deliveries WHERE id = $1',
          [delivery!.id],
        )
        .then((r) => r.rows[0]!);
    // The first holder's try comes back refused: it is kept, and the second claim holds.
    const first = { id: delivery!.id, endpointId: endpoint.id, claimToken: randomUUID() };
    const refused = {
      status: 503,
      error: 'answered 503',
      durationMs: 5,
      outcome: 'retry' as const,
    };
    await recordDeliveryTry(stack.pool, first, refused, DEFAULTS.webhookBreaker);
    expect(await row()).toEqual({
      claim_token: claimed[0]!.claimToken,
      state: 'pending',
      tries: 1,
    });
    // The second holder delivers; then a try of the first lands after the end: kept, and the
    // delivery stays delivered.
    await recordDeliveryTry(
      stack.pool,
      claimed[0]!,
      { status: 204, error: null, durationMs: 5, outcome: 'delivered' },
      DEFAULTS.webhookBreaker,
    );
    await recordDeliveryTry(stack.pool, first, refused, DEFAULTS.webhookBreaker);
    expect(await row()).toEqual({ claim_token: null, state: 'delivered', tries: 3 });
    const kept = await stack.pool.query<{ n: number; status: number }>(
      'SELECT n, status FROM webhook_delivery_tries WHERE delivery_id = $1 ORDER BY n',
      [delivery!.id],
    );
    expect(kept.rows).toEqual([
      { n: 1, status: 503 },
      { n: 2, status: 204 },
      { n: 3, status: 503 },
    ]);
  } finally {
    await silent.stop();
  }
});

test('giving up on an event whose delivery is claimed by a try still out ends it failed and frees the claim', async () => {
  const silent = await SilentReceiver.start();
  try {
    expect((await register(LONGEST_OWNER_TOKEN, silent.url('never'))).status).toBe(201);
    const job = await create(LONGEST_OWNER_TOKEN);
    // The sender's try is out, its delivery claimed.
    await eventually(
      async () => silent.requests,
      (n) => n >= 1,
    );
    expect(await failPendingDeliveries(stack.pool, job.id, 'job.succeeded', 'given up')).toBe(1);
    const { rows } = await stack.pool.query<{
      state: string;
      claim_token: string | null;
      claimed_until: Date | null;
    }>('SELECT state, claim_token, claimed_until FROM webhook_deliveries WHERE job_id = $1', [
      job.id,
    ]);
    expect(rows).toEqual([{ state: 'failed', claim_token: null, claimed_until: null }]);
  } finally {
    await silent.stop();
  }
});
