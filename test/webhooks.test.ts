import { Webhook } from 'standardwebhooks';
import { withDefaults } from '../src/config';
import { finishJobWithoutResult } from '../src/db/endedJobs';
import { insertNeedsOperatorDeliveries } from '../src/db/webhookDeliveries';
import { parseSecretKeys } from '../src/domain/secretSealing';
import { createLogger } from '../src/logger';
import type { ProviderConfig } from '../src/providers/provider';
import { deliverJobWebhooks } from '../src/service/webhookDelivery';
import { WebhookNames } from '../src/service/webhookNames';
import { BACKSTOP_BATCH } from '../src/service/webhookSenders';
import { WebhookSendSlots } from '../src/service/webhookSendSlots';
import { isInternalAddress } from '../src/service/webhookTargets';
import { factsOf } from './replay/paths';
import { OTHER_TOKEN, TEST_SECRET_KEYS, TEST_TOKEN } from './support/identities';
import { chargeBody, createJob, summarizeBody, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver, type ReceivedWebhook } from './support/webhookReceiver';

/**
 * Completion webhooks end to end: the real API registers endpoints, the real worker's job
 * workflows hand their events to sender workflows, and a receiver on a real port checks every
 * signature with the Standard Webhooks reference library.
 */
const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat', 'sim-steady'),
  chatProvider(url, 'chat-refuses', 'sim-refuses'),
  // Its calls outlast any test step: only the test decides when they end.
  payProvider(url, 'pay-patient', { timeoutMs: 120_000 }),
  // Cut off after a second: its attempt is unknown while the simulator holds the charge.
  payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS }),
];

let stack: TestStack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  stack = await startTestStack({
    providers,
    env: {
      // Retries a few hundred milliseconds apart, so that a test sees several.
      ONEJOB_WEBHOOK_FIRST_RETRY_MS: '200',
      ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS: '1000',
      ONEJOB_NEEDS_OPERATOR_AFTER_MS: '1000',
      // The workers' backstop looks every 300 ms for deliveries left 3 s without a sender.
      ONEJOB_WEBHOOK_STRANDED_AFTER_MS: '3000',
      // Receivers here go down for a while on purpose: an endpoint's breaker (its own test is in
      // webhookIsolation.test.ts) would hold them for the rest of the file.
      ONEJOB_WEBHOOK_BREAKER_FAILURES: '1000',
    },
  });
  receiver = await WebhookReceiver.start();
  // The receiver reads the job's row as each event arrives: it must have ended already.
  receiver.onRequest = async (payload) => {
    const { type, data } = payload as { type: string; data: { id: string } };
    const { rows } = await stack.pool.query<{ terminal_status: string | null }>(
      'SELECT terminal_status FROM jobs WHERE id = $1',
      [data.id],
    );
    return { type, rowStatus: rows[0]?.terminal_status ?? null };
  };
});
afterAll(async () => {
  await receiver?.down();
  await stack?.stop();
});

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  secret: string;
  disabledAt: string | null;
}

const registered: string[] = [];
/** Registers the receiver for the test owner's jobs; it is deleted after the test. */
async function register(events?: string[]): Promise<Endpoint> {
  const answer = await stack.request('POST', '/v1/webhooks', {
    body: { url: receiver.url, ...(events ? { events } : {}) },
  });
  expect(answer.status).toBe(201);
  const endpoint = (await answer.json()) as Endpoint;
  registered.push(endpoint.id);
  receiver.secret = endpoint.secret;
  return endpoint;
}
afterEach(async () => {
  for (const id of registered.splice(0)) await stack.request('DELETE', `/v1/webhooks/${id}`);
});

interface Delivery {
  id: string;
  event: string;
  state: string;
  tries: Array<{ n: number; status: number | null; error: string | null }>;
}
const deliveries = async (jobId: string): Promise<Delivery[]> =>
  (
    (await (await stack.request('GET', `/v1/jobs/${jobId}/webhook-deliveries`)).json()) as {
      deliveries: Delivery[];
    }
  ).deliveries;
const untilDeliveries = (jobId: string, done: (d: Delivery[]) => boolean) =>
  eventually(() => deliveries(jobId), done, 60_000);
const untilReceived = (jobId: string, done: (r: ReceivedWebhook[]) => boolean) =>
  eventually(async () => receiver.of(jobId), done, 60_000);

const typeOf = (r: ReceivedWebhook): string => (JSON.parse(r.body) as { type: string }).type;

test('each ending sends one event, signed per Standard Webhooks (verified by the reference library), after the job row has ended; its body is the ended job resource and the delivery is recorded on the job', async () => {
  await register();
  const won = await createJob(stack, summarizeBody(['chat']));
  const failed = await createJob(stack, summarizeBody(['chat-refuses']));
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'cancelled-charge' } });
  const cancelled = await createJob(stack, chargeBody(['pay-patient']));
  await untilJob(stack, cancelled.id, (j) => j.attempts[0]?.state === 'running');
  expect((await stack.request('POST', `/v1/jobs/${cancelled.id}/cancel`)).status).toBe(200);

  for (const [job, event, status] of [
    [won, 'job.succeeded', 'succeeded'],
    [failed, 'job.failed', 'failed'],
    [cancelled, 'job.cancelled', 'cancelled'],
  ] as const) {
    const [got] = await untilReceived(job.id, (r) => r.length === 1);
    expect(got!.verified).toMatchObject({ type: event, data: { id: job.id, status } });
    // The receiver that reads the job on the event finds it ended.
    expect(got!.seen).toEqual({ type: event, rowStatus: status });
    const [recorded] = await untilDeliveries(job.id, (d) => d[0]?.state === 'delivered');
    expect(recorded).toMatchObject({ id: got!.id, event, tries: [{ n: 1, status: 204 }] });
  }
  stack.simulator.openGate('cancelled-charge');
  // The charge that lands after the cancel is told once, as job.late_result; the ending is not
  // sent again (one event per ending).
  await untilJob(stack, cancelled.id, (j) => j.attempts[0]?.state === 'lost');
  const told = await untilReceived(cancelled.id, (r) => r.length >= 2);
  expect(told.map(typeOf)).toEqual(['job.cancelled', 'job.late_result']);
  expect(told[1]!.verified).toMatchObject({
    type: 'job.late_result',
    data: { id: cancelled.id, status: 'cancelled', attempts: [{ state: 'lost' }] },
  });
});

test('a refused delivery is retried with the same webhook-id and the same body until the receiver takes it, and each try is recorded', async () => {
  await register(['job.succeeded']);
  receiver.answerNext(503, 500);
  const job = await createJob(stack, summarizeBody(['chat']));

  const got = await untilReceived(job.id, (r) => r.length === 3);
  expect(got.map((r) => r.answered)).toEqual([503, 500, 204]);
  expect(new Set(got.map((r) => r.id)).size).toBe(1);
  expect(new Set(got.map((r) => r.body)).size).toBe(1);
  for (const r of got) expect(r.verified).toMatchObject({ type: 'job.succeeded' });
  const [recorded] = await untilDeliveries(job.id, (d) => d[0]?.state === 'delivered');
  expect(recorded!.tries.map((t) => t.status)).toEqual([503, 500, 204]);
  expect(recorded!.id).toBe(got[0]!.id);
});

test('a receiver that is down gets its events once it is back, in order per job: the attempt that needed an operator before the job’s ending', async () => {
  await register();
  await receiver.down();
  try {
    // The charge's call is cut off after a second with the simulator holding it: unknown.
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'late-charge' } });
    const job = await createJob(stack, chargeBody(['pay']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown', 30_000);
    // Past the threshold the job calls for an operator; the receiver cannot hear it yet.
    await untilDeliveries(job.id, (d) =>
      d.some((x) => x.event === 'job.needs_operator' && x.tries.length >= 2),
    );
    // The late charge lands and wins; the ending queues behind the operator's event.
    stack.simulator.openGate('late-charge');
    await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    const queued = await untilDeliveries(job.id, (d) => d.length === 2);
    expect(queued.map((d) => d.event)).toEqual(['job.needs_operator', 'job.succeeded']);
    // Nothing of the ending was tried before the earlier event got through.
    expect(queued[1]!.tries).toEqual([]);
    expect(receiver.of(job.id)).toEqual([]);

    await receiver.up();
    const got = await untilReceived(job.id, (r) => r.length === 2);
    expect(got.map(typeOf)).toEqual(['job.needs_operator', 'job.succeeded']);
    expect(got[0]!.verified).toMatchObject({ data: { id: job.id, status: 'unknown' } });
    expect(got[1]!.verified).toMatchObject({ data: { id: job.id, status: 'succeeded' } });
    const done = await untilDeliveries(job.id, (d) => d.every((x) => x.state === 'delivered'));
    expect(done[0]!.tries.at(-1)!.status).toBe(204);
    // The receiver is on loopback (internal): its owner reads that no answer came, not why.
    expect(done[0]!.tries[0]!.error).toMatch(/^no answer \(an internal receiver/);
  } finally {
    await receiver.up().catch(() => undefined);
  }
});

test('an endpoint registered while a job runs, its owner having none when the job was admitted, still gets the ending: its run does not ask for events, and the workers’ backstop hands it over', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'registered-late' } });
  const job = await createJob(stack, chargeBody(['pay-patient']));
  await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
  await register(['job.succeeded']);
  stack.simulator.openGate('registered-late');
  const [got] = await untilReceived(job.id, (r) => r.length === 1);
  expect(got!.verified).toMatchObject({ type: 'job.succeeded', data: { id: job.id } });
  await untilDeliveries(job.id, (d) => d[0]?.state === 'delivered');
  // Admission saw no endpoint, so the run ended without the lookup of its events.
  const { rows } = await stack.pool.query<{ workflow_id: string }>(
    'SELECT workflow_id FROM jobs WHERE id = $1',
    [job.id],
  );
  const history = await stack.temporal.workflow.getHandle(rows[0]!.workflow_id).fetchHistory();
  expect(factsOf(history).localActivities.map((a) => a.type)).toEqual(['admitJob']);
});

test('a delivery whose sender was lost (its workflow terminated) is handed to a new sender by the workers’ backstop, and arrives', async () => {
  await register(['job.succeeded']);
  await receiver.down();
  try {
    const job = await createJob(stack, summarizeBody(['chat']));
    await untilDeliveries(job.id, (d) => (d[0]?.tries.length ?? 0) >= 1);
    // An operator terminates the sender: nothing of the job's own run will start another.
    const sender = stack.temporal.workflow.getHandle(`webhooks/${job.id}/job.succeeded`);
    const lost = (await sender.describe()).runId;
    await sender.terminate('lost on purpose');
    await receiver.up();
    const [got] = await untilReceived(job.id, (r) => r.length === 1);
    expect(got!.verified).toMatchObject({ type: 'job.succeeded', data: { id: job.id } });
    expect((await sender.describe()).runId).not.toBe(lost);
    await untilDeliveries(job.id, (d) => d[0]?.state === 'delivered');
  } finally {
    await receiver.up().catch(() => undefined);
  }
});

test('the backstop reaches a lost sender however many live senders wait in their backoff ahead of it: the least recently tried come first', async () => {
  await register(['job.succeeded']);
  await receiver.down();
  try {
    // Two rounds' worth of older events whose senders are alive and retrying: oldest first, a
    // round would take only those (a few may be mid-try, and so passed by, at any moment).
    const alive = [];
    for (let n = 0; n < 2 * BACKSTOP_BATCH; n += 1)
      alive.push(await createJob(stack, summarizeBody(['chat'])));
    for (const job of alive) await untilDeliveries(job.id, (d) => (d[0]?.tries.length ?? 0) >= 1);
    const job = await createJob(stack, summarizeBody(['chat']));
    await untilDeliveries(job.id, (d) => (d[0]?.tries.length ?? 0) >= 1);
    const sender = stack.temporal.workflow.getHandle(`webhooks/${job.id}/job.succeeded`);
    const lost = (await sender.describe()).runId;
    await sender.terminate('lost on purpose');
    // Restarted while the receiver is still down, so the live senders still wait ahead of it.
    await eventually(
      () => sender.describe(),
      (run) => run.runId !== lost,
      60_000,
    );
    await receiver.up();
    await untilReceived(job.id, (r) => r.length === 1);
  } finally {
    await receiver.up().catch(() => undefined);
  }
});

test('a rotated secret leaves no gap: during the rotation every event is signed with the old and the new secret, each verifying alone', async () => {
  const endpoint = await register(['job.succeeded']);
  const rotation = await stack.request('POST', `/v1/webhooks/${endpoint.id}/secret-rotations`, {
    body: { previousSecretExpiresInSeconds: 3600 },
  });
  expect(rotation.status).toBe(200);
  const { secret } = (await rotation.json()) as { secret: string };
  expect(secret).not.toBe(endpoint.secret);

  const job = await createJob(stack, summarizeBody(['chat']));
  const [got] = await untilReceived(job.id, (r) => r.length === 1);
  expect(got!.signatures).toHaveLength(2);
  const headers = {
    'webhook-id': got!.id,
    'webhook-timestamp': got!.timestamp,
    'webhook-signature': got!.signatures.join(' '),
  };
  for (const key of [endpoint.secret, secret])
    expect(new Webhook(key).verify(got!.body, headers)).toMatchObject({ type: 'job.succeeded' });
  for (const single of got!.signatures) {
    const oneSigned = { ...headers, 'webhook-signature': single };
    const verifiers = [endpoint.secret, secret].filter((key) => {
      try {
        new Webhook(key).verify(got!.body, oneSigned);
        return true;
      } catch {
        return false;
      }
    });
    expect(verifiers).toHaveLength(1);
  }

  // Once the old secret has expired, only the new one signs.
  await stack.pool.query(
    `UPDATE webhook_secrets SET expires_at = now() WHERE endpoint_id = $1 AND expires_at IS NOT NULL`,
    [endpoint.id],
  );
  receiver.secret = secret;
  const next = await createJob(stack, summarizeBody(['chat']));
  const [later] = await untilReceived(next.id, (r) => r.length === 1);
  expect(later!.signatures).toHaveLength(1);
  expect(later!.verified).toMatchObject({ type: 'job.succeeded' });
});

test('a receiver that answers 410 Gone disables its endpoint: nothing more is sent to it until its owner enables it again', async () => {
  const endpoint = await register(['job.succeeded']);
  receiver.answerNext(410);
  const first = await createJob(stack, summarizeBody(['chat']));
  const [gone] = await untilDeliveries(first.id, (d) => d[0]?.state === 'abandoned');
  expect(gone!.tries.map((t) => t.status)).toEqual([410]);
  const disabled = (await (await stack.request('GET', `/v1/webhooks/${endpoint.id}`)).json()) as {
    disabledAt: string | null;
    disabledReason: string | null;
  };
  expect(disabled.disabledAt).not.toBeNull();
  expect(disabled.disabledReason).toMatch(/410/);

  const second = await createJob(stack, summarizeBody(['chat']));
  await untilJob(stack, second.id, (j: JobView) => j.status === 'succeeded');
  expect(await deliveries(second.id)).toEqual([]);

  expect((await stack.request('POST', `/v1/webhooks/${endpoint.id}/enable`)).status).toBe(200);
  const third = await createJob(stack, summarizeBody(['chat']));
  await untilReceived(third.id, (r) => r.length === 1);
  expect(receiver.of(first.id)).toHaveLength(1);
  expect(receiver.of(second.id)).toEqual([]);
});

test('endpoints are their owner’s: a bad URL is a 400 problem, the secret is shown only at registration, another owner sees 404, and a deleted endpoint is gone', async () => {
  const bad = await stack.request('POST', '/v1/webhooks', { body: { url: 'ftp://example.com/x' } });
  expect(bad.status).toBe(400);
  expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const unknownEvent = await stack.request('POST', '/v1/webhooks', {
    body: { url: receiver.url, events: ['job.exploded'] },
  });
  expect(unknownEvent.status).toBe(400);

  const endpoint = await register(['job.failed']);
  expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const listed = (await (await stack.request('GET', '/v1/webhooks')).json()) as {
    endpoints: Array<Record<string, unknown>>;
  };
  expect(listed.endpoints).toEqual([
    expect.objectContaining({ id: endpoint.id, url: receiver.url, events: ['job.failed'] }),
  ]);
  expect(JSON.stringify(listed)).not.toContain(endpoint.secret);
  for (const [method, path] of [
    ['GET', `/v1/webhooks/${endpoint.id}`],
    ['DELETE', `/v1/webhooks/${endpoint.id}`],
    ['POST', `/v1/webhooks/${endpoint.id}/secret-rotations`],
  ] as const)
    expect((await stack.request(method, path, { token: OTHER_TOKEN })).status).toBe(404);

  expect((await stack.request('DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(204);
  expect((await stack.request('GET', `/v1/webhooks/${endpoint.id}`)).status).toBe(404);
  expect((await stack.request('DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(404);
  expect((await stack.request('GET', '/v1/jobs/not-a-job/webhook-deliveries')).status).toBe(404);
});

test('internal addresses (loopback, private, link-local) are refused where not allowed: at registration by the API, and at every try by the sender, before it connects', async () => {
  const denying = await stack.startExtraApi({ ONEJOB_WEBHOOK_INTERNAL_TARGETS: 'deny' });
  try {
    for (const url of [
      receiver.url,
      receiver.url.replace('127.0.0.1', 'localhost'),
      'http://169.254.169.254/latest',
      'http://[::1]:9/x',
    ]) {
      const refused = await fetch(`${denying.url}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      expect(refused.status).toBe(400);
      const problem = (await refused.json()) as { type: string; detail: string };
      expect(problem).toMatchObject({
        type: '/problems/validation-error',
        detail: expect.stringMatching(/internal address/),
      });
      // Never which address a name resolves to: the deployment's network is not the owner's.
      if (url.includes('localhost')) expect(problem.detail).not.toMatch(/127\.0\.0\.1|::1/);
    }
  } finally {
    await denying.stop();
  }
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:10.0.0.1',
    // IPv6 that reaches an internal IPv4 host: mapped in hex, NAT64, IPv4-compatible, 6to4.
    '::ffff:7f00:1',
    '64:ff9b::a9fe:a9fe',
    '::7f00:1',
    '2002:7f00:1::',
    'fec0::1',
  ])
    expect([address, isInternalAddress(address)]).toEqual([address, true]);
  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '2001:4860:4860::8888',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])
    expect([address, isInternalAddress(address)]).toEqual([address, false]);

  // A sender that denies them records why and never connects (a down receiver would say
  // ECONNREFUSED): registered where allowed, tried by a sender that denies.
  const refusedTry = await triedByDenyingSender(
    { allowInternal: false, allowPlainHttp: true },
    /internal address/,
  );
  expect(refusedTry).toMatchObject({
    status: null,
    error: expect.stringMatching(/^127\.0\.0\.1 is an internal address/),
  });
});

/**
 * Registers the receiver, downs it, ends a job, and has a sender that denies what `settings`
 * deny try its delivery until a try's error matches `why`: that try (a down receiver would
 * have said ECONNREFUSED, so it never connected).
 */
async function triedByDenyingSender(
  settings: { allowInternal: boolean; allowPlainHttp?: boolean },
  why: RegExp,
): Promise<Delivery['tries'][number] | undefined> {
  await register(['job.succeeded']);
  await receiver.down();
  try {
    const job = await createJob(stack, summarizeBody(['chat']));
    const sender = {
      pool: stack.pool,
      logger: createLogger('test', 'silent'),
      ...settings,
      slots: new WebhookSendSlots(8, 8),
      secretKeys: parseSecretKeys(TEST_SECRET_KEYS),
      names: new WebhookNames({ timeoutMs: 5_000 }),
      breaker: withDefaults().webhookBreaker,
    };
    const tried = await eventually(
      async () => {
        await deliverJobWebhooks(sender, job.id);
        return deliveries(job.id);
      },
      (d) => d[0]?.tries.some((t) => why.test(t.error ?? '')) === true,
    );
    return tried[0]!.tries.find((t) => why.test(t.error ?? ''));
  } finally {
    await receiver.up();
  }
}

test('plain http endpoints are refused where not allowed: at registration by the API, and at every try by the sender, before it connects', async () => {
  const denying = await stack.startExtraApi({ ONEJOB_WEBHOOK_PLAIN_HTTP: 'deny' });
  try {
    const post = (url: string) =>
      fetch(`${denying.url}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
    const refused = await post(receiver.url);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      type: '/problems/validation-error',
      detail: expect.stringMatching(/https only/),
    });
    const secure = await post('https://hooks.example/onejob');
    expect(secure.status).toBe(201);
    const secureId = ((await secure.json()) as { id: string }).id;
    expect((await stack.request('DELETE', `/v1/webhooks/${secureId}`)).status).toBe(204);
  } finally {
    await denying.stop();
  }
  // Registered where http is allowed, tried by a sender that denies it: nothing is sent.
  expect(await triedByDenyingSender({ allowInternal: true }, /plain http/)).toMatchObject({
    status: null,
  });
});

test('the bytes of an event are fixed once for all its endpoints before they are first sent: a try whose answer is never recorded (a crash, the database gone) is sent again with the same bytes', async () => {
  await register(['job.succeeded']);
  const readsRow = receiver.onRequest;
  // As each event comes in, the receiver reads what its delivery's row holds as its body.
  receiver.onRequest = async (payload) => {
    const { data } = payload as { data: { id: string } };
    const { rows } = await stack.pool.query<{ body: string | null }>(
      `SELECT body FROM webhook_event_bodies WHERE job_id = $1 AND event_key = 'job.succeeded'`,
      [data.id],
    );
    return { fixedBody: rows[0]?.body ?? null };
  };
  try {
    const job = await createJob(stack, summarizeBody(['chat']));
    const [got] = await untilReceived(job.id, (r) => r.length === 1);
    expect(got!.seen).toEqual({ fixedBody: got!.body });
  } finally {
    receiver.onRequest = readsRow;
  }
});

/**
 * Holds a job's ending open: the product's own statement ends the row (its trigger writes the
 * ending's deliveries) in a transaction that commits only when the test says, as a late result
 * or a callback ending the job in another process would be, mid-way.
 */
async function endingHeldOpen(jobId: string): Promise<{ commit(): Promise<void> }> {
  const client = await stack.pool.connect();
  await client.query('BEGIN');
  await finishJobWithoutResult(client, jobId, 'cancelled', {
    code: 'cancelled',
    reason: 'ended in another transaction',
  });
  return {
    async commit() {
      try {
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
  };
}

/** Whether a statement containing `text` waits on a lock in the stack's database now. */
async function waitingOnLock(text: string): Promise<boolean> {
  const { rows } = await stack.pool.query(
    `SELECT 1 FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
    [`%${text}%`],
  );
  return rows.length > 0;
}

test('no job.needs_operator is written for a job whose ending is being written at that moment: it waits for the ending and sees it, so it is never sent after the ending', async () => {
  await register(['job.needs_operator', 'job.cancelled']);
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'needs-operator-race' } });
  const job = await createJob(stack, chargeBody(['pay-patient']));
  try {
    await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
    const ending = await endingHeldOpen(job.id);
    let settled = false;
    const raising = insertNeedsOperatorDeliveries(stack.pool, job.id, 'needs_operator:1').finally(
      () => (settled = true),
    );
    // The ending is still uncommitted when the event is written, or waited for.
    await eventually(
      async () => settled || (await waitingOnLock("'job.needs_operator', $2")),
      (ready) => ready,
    );
    await ending.commit();
    expect(await raising).toBe(false);
    const { rows } = await stack.pool.query<{ event: string }>(
      'SELECT event FROM webhook_deliveries WHERE job_id = $1 ORDER BY position',
      [job.id],
    );
    expect(rows.map((row) => row.event)).toEqual(['job.cancelled']);
  } finally {
    stack.simulator.openGate('needs-operator-race');
  }
});

test('an endpoint deleted while a job’s ending was being written is sent nothing of it: the delivery the ending wrote for it is abandoned, not tried', async () => {
  const endpoint = await register(['job.cancelled']);
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'deleted-endpoint' } });
  const job = await createJob(stack, chargeBody(['pay-patient']));
  try {
    await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
    const ending = await endingHeldOpen(job.id);
    expect((await stack.request('DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(204);
    await ending.commit();
    // A sender for the job's events (the backstop would start one for a delivery left waiting).
    await deliverJobWebhooks(
      {
        pool: stack.pool,
        logger: createLogger('test', 'silent'),
        allowInternal: true,
        allowPlainHttp: true,
        slots: new WebhookSendSlots(8, 8),
        secretKeys: parseSecretKeys(TEST_SECRET_KEYS),
        names: new WebhookNames({ timeoutMs: 5_000 }),
        breaker: withDefaults().webhookBreaker,
      },
      job.id,
    );
    const { rows } = await stack.pool.query<{ state: string; last_error: string | null }>(
      'SELECT state, last_error FROM webhook_deliveries WHERE job_id = $1',
      [job.id],
    );
    expect(rows).toEqual([{ state: 'abandoned', last_error: 'the endpoint was deleted' }]);
    expect(receiver.of(job.id)).toEqual([]);
  } finally {
    stack.simulator.openGate('deleted-endpoint');
  }
});
