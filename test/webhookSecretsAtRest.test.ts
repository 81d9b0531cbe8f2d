import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { migrate, MIGRATIONS_DIR } from '../src/db/migrate';
import { openSecretRow } from '../src/db/webhookSecrets';
import { parseSecretKeys, sealedKeyId } from '../src/domain/secretSealing';
import type { ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import { createTestDatabase } from './support/database';
import {
  TEST_OWNER,
  TEST_SECRET_KEY_1,
  TEST_SECRET_KEY_2,
  TEST_SECRET_KEYS,
  TEST_TOKEN,
} from './support/identities';
import { createJob, summarizeBody } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver, type ReceivedWebhook } from './support/webhookReceiver';

/**
 * Webhook signing secrets at rest (issue 55, N8), on the real stack: stored sealed under
 * ONEJOB_SECRET_KEYS (k2 first, then k1), opened only to sign a try, kept readable through a
 * rotation of the key ring, refused with a clear error under a wrong or missing key, and purged
 * once nothing signs with them.
 */
const providers = (url: string): ProviderConfig[] => [chatProvider(url, 'chat', 'sim-steady')];

const ring = parseSecretKeys(TEST_SECRET_KEYS);
let stack: TestStack;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  stack = await startTestStack({
    providers,
    // The worker as its own process, so that its sweeper runs (every 300 ms here) and purges.
    workerProcess: true,
    env: { ONEJOB_SWEEP_INTERVAL_MS: '300' },
  });
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.down();
  await stack?.stop();
});

const registered: string[] = [];
afterEach(async () => {
  for (const id of registered.splice(0)) await stack.request('DELETE', `/v1/webhooks/${id}`);
});

interface Endpoint {
  id: string;
  secret: string;
}

/** A new receiver registered through the API at `apiUrl` (the stack's by default). */
async function registerReceiver(
  apiUrl = stack.apiUrl,
): Promise<{ endpoint: Endpoint; receiver: WebhookReceiver }> {
  const receiver = await WebhookReceiver.start();
  receivers.push(receiver);
  const answer = await fetch(`${apiUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, events: ['job.succeeded'] }),
  });
  expect(answer.status).toBe(201);
  const endpoint = (await answer.json()) as Endpoint;
  registered.push(endpoint.id);
  receiver.secret = endpoint.secret;
  return { endpoint, receiver };
}

interface StoredRow {
  id: string;
  endpoint_id: string;
  secret: string;
}
const storedSecrets = async (endpointId: string): Promise<StoredRow[]> =>
  (
    await stack.pool.query<StoredRow>(
      'SELECT id::text, endpoint_id, secret FROM webhook_secrets WHERE endpoint_id = $1 ORDER BY id',
      [endpointId],
    )
  ).rows;

/** The event of a new job that ends, as `receiver` got it. */
async function endedJobEvent(receiver: WebhookReceiver): Promise<ReceivedWebhook> {
  const job = await createJob(stack, summarizeBody(['chat']));
  const [got] = await eventually(
    async () => receiver.of(job.id),
    (r) => r.length === 1,
    60_000,
  );
  return got!;
}

test('a webhook signing secret is stored sealed, never as its whsec_ text, and opens to the secret that signs every try (a Standard Webhooks receiver accepts them)', async () => {
  const { endpoint, receiver } = await registerReceiver();
  const rotated = await stack.request('POST', `/v1/webhooks/${endpoint.id}/secret-rotations`, {
    body: {},
  });
  expect(rotated.status).toBe(200);
  const { secret: current } = (await rotated.json()) as { secret: string };
  receiver.secret = current;

  const stored = await storedSecrets(endpoint.id);
  expect(stored).toHaveLength(2);
  for (const row of stored) {
    expect(row.secret).not.toContain('whsec_');
    for (const shown of [endpoint.secret, current])
      expect(row.secret).not.toContain(shown.slice('whsec_'.length, 30));
    expect(sealedKeyId(row.secret)).toBe('k2');
  }
  expect(stored.map((row) => openSecretRow(ring, row))).toEqual([endpoint.secret, current]);
  // Nothing stored anywhere else holds a secret either.
  const { rows: anywhere } = await stack.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_secrets WHERE secret LIKE '%whsec%'`,
  );
  expect(anywhere[0]!.n).toBe(0);

  const got = await endedJobEvent(receiver);
  expect(got.verified).toMatchObject({ type: 'job.succeeded' });
  // Signed under both live secrets, as the rotation promises.
  const headers = {
    'webhook-id': got.id,
    'webhook-timestamp': got.timestamp,
    'webhook-signature': got.signatures.join(' '),
  };
  expect(new Webhook(endpoint.secret).verify(got.body, headers)).toMatchObject({
    type: 'job.succeeded',
  });
});

test('a key ring rotation keeps every secret readable: one sealed under the old key still signs once a new key comes first, `onejob secrets rewrap` moves it under the new key, and only then does a ring without the old key start', async () => {
  // A replica still on the old ring (k1 alone) registers one endpoint …
  const oldReplica = await stack.startExtraApi({ ONEJOB_SECRET_KEYS: TEST_SECRET_KEY_1 });
  const old = await registerReceiver(oldReplica.url);
  await oldReplica.stop();
  // … and one on the rotated ring (k2 first, k1 still there) registers another.
  const fresh = await registerReceiver();
  expect(sealedKeyId((await storedSecrets(old.endpoint.id))[0]!.secret)).toBe('k1');
  expect(sealedKeyId((await storedSecrets(fresh.endpoint.id))[0]!.secret)).toBe('k2');

  // The sender (k2, k1) signs for both.
  const job = await createJob(stack, summarizeBody(['chat']));
  for (const { receiver } of [old, fresh]) {
    const [got] = await eventually(
      async () => receiver.of(job.id),
      (r) => r.length === 1,
      60_000,
    );
    expect(got!.verified).toMatchObject({ type: 'job.succeeded' });
  }

  // Dropping k1 now would strand that secret: a service with k2 alone refuses to start.
  await expect(stack.startExtraApi({ ONEJOB_SECRET_KEYS: TEST_SECRET_KEY_2 })).rejects.toThrow(
    /sealed under key "k1", which ONEJOB_SECRET_KEYS does not hold/,
  );

  const rewrap = await runCli(stack, ['secrets', 'rewrap'], {
    ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS,
  });
  expect(rewrap).toMatchObject({ code: 0, stderr: '' });
  expect(rewrap.stdout).toMatch(/^rewrapped \d+ webhook secrets? under key k2 \(\d+ from k1\)/);
  const rows = await storedSecrets(old.endpoint.id);
  expect(rows.map((row) => sealedKeyId(row.secret))).toEqual(['k2']);
  // Resealed, not replaced: the same secret, which the receiver still verifies with.
  expect(openSecretRow(parseSecretKeys(TEST_SECRET_KEY_2), rows[0]!)).toBe(old.endpoint.secret);
  const after = await stack.startExtraApi({ ONEJOB_SECRET_KEYS: TEST_SECRET_KEY_2 });
  await after.stop();
  expect((await endedJobEvent(old.receiver)).verified).toMatchObject({ type: 'job.succeeded' });
});

test('a wrong or missing key is a clear one-line refusal at start, never a try signed with garbage', async () => {
  await registerReceiver();
  const other = Buffer.alloc(32, 0x5a).toString('base64');
  await expect(
    stack.startExtraApi({ ONEJOB_SECRET_KEYS: `k2:${other},${TEST_SECRET_KEY_1}` }),
  ).rejects.toThrow(
    /onejob api: webhook secret \d+ of endpoint [0-9a-f-]+ does not open under key "k2" of ONEJOB_SECRET_KEYS/,
  );
  // The CLI says the same, and changes nothing.
  const before = await stack.pool.query<{ secret: string }>(
    'SELECT secret FROM webhook_secrets ORDER BY id',
  );
  const refused = await runCli(stack, ['secrets', 'rewrap'], {
    ONEJOB_SECRET_KEYS: `k3:${other}`,
  });
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim()).toMatch(
    /^onejob: webhook secret \d+ of endpoint [0-9a-f-]+ is sealed under key "k\d", which ONEJOB_SECRET_KEYS does not hold \(it holds k3\)/,
  );
  expect(
    (await stack.pool.query<{ secret: string }>('SELECT secret FROM webhook_secrets ORDER BY id'))
      .rows,
  ).toEqual(before.rows);
  const unset = await runCli(stack, ['secrets', 'rewrap'], { ONEJOB_SECRET_KEYS: '' });
  expect(unset.code).toBe(1);
  expect(unset.stderr).toMatch(/^onejob: ONEJOB_SECRET_KEYS is not set/);
});

test('secrets stored in plaintext before the upgrade are sealed at the next boot, each to the value it held, and the database then refuses plaintext', async () => {
  // A database as the release before this one left it: every migration before 0022.
  const before = await mkdtemp(path.join(tmpdir(), 'onejob-migrations-'));
  for (const file of await readdir(MIGRATIONS_DIR))
    if (/^\d+_/.test(file) && Number(file.slice(0, 4)) < 22)
      await copyFile(path.join(MIGRATIONS_DIR, file), path.join(before, file));
  const legacy = await createTestDatabase(before);
  await rm(before, { recursive: true });
  try {
    const { rows } = await legacy.pool.query<{ id: string }>(
      `INSERT INTO webhook_endpoints (owner_id, url, events)
       VALUES ($1, 'https://receiver.example/hooks', ARRAY['job.succeeded']) RETURNING id`,
      [TEST_OWNER],
    );
    const endpointId = rows[0]!.id;
    const plain = [1, 2].map((n) => `whsec_${Buffer.alloc(32, n).toString('base64')}`);
    await legacy.pool.query(
      `INSERT INTO webhook_secrets (endpoint_id, secret, expires_at)
       VALUES ($1, $2, now() + interval '1 day'), ($1, $3, NULL)`,
      [endpointId, ...plain],
    );

    // The upgrade: this release's migrations, then its API's boot.
    await migrate(legacy.pool);
    const api = await stack.startExtraApi({ DATABASE_URL: legacy.url });
    await api.stop();

    const { rows: sealed } = await legacy.pool.query<StoredRow>(
      'SELECT id::text, endpoint_id, secret FROM webhook_secrets ORDER BY id',
    );
    expect(sealed.map((row) => sealedKeyId(row.secret))).toEqual(['k2', 'k2']);
    expect(sealed.map((row) => openSecretRow(ring, row))).toEqual(plain);
    await expect(
      legacy.pool.query('INSERT INTO webhook_secrets (endpoint_id, secret) VALUES ($1, $2)', [
        endpointId,
        `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
      ]),
    ).rejects.toThrow(/webhook_secrets_sealed/);
  } finally {
    await legacy.drop();
  }
});

test('expired secrets and every secret of a deleted endpoint are purged from the table by the sweeper', async () => {
  const { endpoint: kept } = await registerReceiver();
  // The replaced secret expires at once: nothing signs with it any more.
  const rotated = await stack.request('POST', `/v1/webhooks/${kept.id}/secret-rotations`, {
    body: { previousSecretExpiresInSeconds: 0 },
  });
  expect(rotated.status).toBe(200);
  const { endpoint: deleted } = await registerReceiver();
  await stack.request('POST', `/v1/webhooks/${deleted.id}/secret-rotations`, { body: {} });
  expect((await stack.request('DELETE', `/v1/webhooks/${deleted.id}`)).status).toBe(204);

  const left = await eventually(
    async () =>
      (
        await stack.pool.query<{ endpoint_id: string; expires_at: Date | null }>(
          `SELECT endpoint_id, expires_at FROM webhook_secrets
            WHERE endpoint_id = ANY ($1) ORDER BY id`,
          [[kept.id, deleted.id]],
        )
      ).rows,
    (rows) => rows.length === 1,
    30_000,
  );
  // What is left is the one secret still signing: the kept endpoint's current one.
  expect(left).toEqual([{ endpoint_id: kept.id, expires_at: null }]);
});
