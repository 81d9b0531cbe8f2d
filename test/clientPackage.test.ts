import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import {
  MemoryWebhookIdStore,
  OneJobClient,
  OneJobProblemError,
  verifyWebhook,
  WebhookDeduplicator,
  WebhookVerificationError,
} from '../client/src';
import { ROOT, TEST_OUTPUT } from './support/harness';
import { TEST_TOKEN } from './support/identities';
import { createJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { attemptRows } from './support/rows';
import { startTestStack, type TestStack } from './support/stack';
import { WebhookReceiver } from './support/webhookReceiver';

/**
 * The client is a package of its own (client/, onejob-client): typed from the API's document,
 * packed and installed apart from the server, its README's example run against the real stack.
 */
const CLIENT = path.join(ROOT, 'client');
const run = promisify(execFile);

let stack: TestStack;
let onejob: OneJobClient;
beforeAll(async () => {
  // No hedge unless asked for: a hedged job's attempts are the ones the test asks for.
  stack = await startTestStack({ hedgeDelayMs: 600_000 });
  onejob = new OneJobClient({ baseUrl: stack.apiUrl, token: TEST_TOKEN });
});
afterAll(async () => {
  await stack?.stop();
});

test("the client's types are generated from the API's own document, so they cannot drift from it", async () => {
  const document = path.join(TEST_OUTPUT, `openapi-client-${process.pid}.json`);
  writeFileSync(document, await (await fetch(`${stack.apiUrl}/docs/json`)).text());
  const check = run('node', [path.join(ROOT, 'dist/tools/client/types.js'), '--check', document]);
  await expect(check).resolves.toBeDefined();
});

test('npm pack ships the compiled client and its README only; installed in a project of its own, the README example runs against the real stack', async () => {
  await run('node', [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', CLIENT]);
  const work = mkdtempSync(path.join(TEST_OUTPUT, 'client-pack-'));
  const quiet = { ...process.env, npm_config_loglevel: 'silent' };
  const [packed] = JSON.parse(
    (
      await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
        cwd: CLIENT,
        env: quiet,
      })
    ).stdout,
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = packed!.files.map((f) => f.path).sort();
  expect(files).toEqual(expect.arrayContaining(['README.md', 'dist/index.d.ts', 'dist/index.js']));
  expect(
    files.filter((f) => !/^(README\.md|package\.json|dist\/[\w.]+\.(js|d\.ts))$/.test(f)),
  ).toEqual([]);

  // A project of its own: it has the packed client and nothing of the server.
  const project = path.join(work, 'project');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), '{"name":"uses-onejob","private":true}');
  await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', path.join(work, packed!.filename)],
    { cwd: project, env: quiet },
  );
  // The README shows the examples as they are: the client's, and a webhook receiver's, which
  // verifies with the Standard Webhooks library (the receiver's own dependency) and deduplicates.
  for (const name of ['quickstart.ts', 'receiver.ts']) {
    const file = path.join(CLIENT, 'examples', name);
    expect(readFileSync(path.join(CLIENT, 'README.md'), 'utf8')).toContain(
      readFileSync(file, 'utf8'),
    );
    copyFileSync(file, path.join(project, name));
  }
  symlinkSync(
    path.join(ROOT, 'node_modules', 'standardwebhooks'),
    path.join(project, 'node_modules', 'standardwebhooks'),
  );
  // Its types hold for a user: strict, against the installed package's declarations.
  await run(
    'node',
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      ...['--noEmit', '--strict', '--skipLibCheck', '--target', 'ES2022'],
      ...['--module', 'node16', '--moduleResolution', 'node16'],
      ...['--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types')],
      'quickstart.ts',
      'receiver.ts',
    ],
    { cwd: project },
  );
  const { stdout } = await run(
    'node',
    [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'quickstart.ts'],
    {
      cwd: project,
      env: { ...process.env, ONEJOB_URL: stack.apiUrl, ONEJOB_TOKEN: TEST_TOKEN },
    },
  );
  expect(stdout).toMatch(/^job [0-9a-f-]{36} created: pending$/m);
  expect(stdout).toMatch(/^job [0-9a-f-]{36} succeeded: \{"summary":/m);
  expect(stdout).toMatch(/^not cancelled: it succeeded$/m);
});

test('retryJob asks for another attempt, and a refusal is a problem naming its cause, not retried', async () => {
  // A hedged job whose first call hangs: another attempt may run beside it.
  stack.simulator.inject({ route: 'chat', times: 2, fault: { kind: 'hang' } });
  const hanging = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Hangs until cancelled. Then it ends.' },
    providers: ['simulator', 'simulator-backup'],
    mode: 'hedged',
  });
  await eventually(
    () => attemptRows(stack.pool, hanging.id),
    (rows) => rows[0]?.state === 'running',
  );
  const attempt = await onejob.retryJob(hanging.id, { provider: 'simulator' });
  expect(attempt).toMatchObject({ attemptId: `${hanging.id}:2`, provider: 'simulator' });

  const cancelled = await onejob.cancelJob(hanging.id, { reason: 'enough' });
  expect(cancelled).toMatchObject({
    id: hanging.id,
    status: 'cancelled',
    failure: { code: 'cancelled', reason: 'enough' },
  });
  const refused = await onejob.retryJob(hanging.id).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(OneJobProblemError);
  expect((refused as OneJobProblemError).problem).toMatchObject({
    status: 409,
    type: '/problems/job-terminal',
  });
  await untilJob(stack, hanging.id, (j) => j.attempts.every((a) => a.state !== 'running'));
});

test('the client registers a webhook endpoint, rotates its secret, reads a job’s deliveries and deletes it; the event verifies under either secret of the rotation', async () => {
  const receiver = await WebhookReceiver.start();
  const endpoint = await onejob.createWebhookEndpoint({
    url: receiver.url,
    events: ['job.succeeded'],
  });
  try {
    expect(endpoint).toMatchObject({ url: receiver.url, events: ['job.succeeded'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = await onejob.listWebhookEndpoints();
    expect(listed.find((e) => e.id === endpoint.id)).not.toHaveProperty('secret');
    const rotation = await onejob.rotateWebhookSecret(endpoint.id, {
      previousSecretExpiresInSeconds: 600,
    });
    expect(rotation.secret).not.toBe(endpoint.secret);
    receiver.secret = rotation.secret;

    const { job } = await onejob.createJob({
      type: 'summarize',
      input: { text: 'Announced when it ends. Signed twice.' },
      providers: ['simulator'],
    });
    expect((await onejob.waitForJob(job.id)).status).toBe('succeeded');
    const deliveries = await eventually(
      () => onejob.listWebhookDeliveries(job.id),
      (found) => found[0]?.state === 'delivered',
      60_000,
    );
    expect(deliveries).toEqual([
      expect.objectContaining({ endpointId: endpoint.id, event: 'job.succeeded' }),
    ]);
    const [event] = receiver.of(job.id);
    // The reference library took it under the new secret; ours does under each, alone.
    expect(event?.verified).toMatchObject({ type: 'job.succeeded', data: { id: job.id } });
    for (const secret of [endpoint.secret, rotation.secret])
      expect(verifyWebhook(secret, event!.headers, event!.body)).toMatchObject({
        data: { id: job.id, status: 'succeeded' },
      });

    expect(await onejob.enableWebhookEndpoint(endpoint.id)).toMatchObject({ disabledAt: null });
    await onejob.deleteWebhookEndpoint(endpoint.id);
    const gone = await onejob.getWebhookEndpoint(endpoint.id).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(OneJobProblemError);
    expect((gone as OneJobProblemError).status).toBe(404);
  } finally {
    await onejob.deleteWebhookEndpoint(endpoint.id).catch(() => undefined);
    await receiver.down();
  }
});

describe('verifyWebhook agrees with the Standard Webhooks reference library', () => {
  const secret = `whsec_${Buffer.from('onejob-client-test-secret-0123456789').toString('base64')}`;
  const older = `whsec_${Buffer.from('the-secret-being-rotated-out-0123').toString('base64')}`;
  const payload = JSON.stringify({ type: 'job.succeeded', data: { id: 'j-1' } });
  const signedBy = (key: string, id: string, at: Date) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(id, at, payload),
  });

  test('a request the library signed verifies, with one secret or several (a rotation)', () => {
    const headers = signedBy(secret, 'msg_1', new Date());
    expect(verifyWebhook(secret, headers, payload)).toEqual(JSON.parse(payload));
    expect(verifyWebhook([older, secret], new Headers(headers), payload)).toEqual(
      JSON.parse(payload),
    );
    // During a rotation the sender signs with both; a receiver with either one accepts.
    const both = {
      ...headers,
      'webhook-signature': `${signedBy(older, 'msg_1', new Date())['webhook-signature']} ${headers['webhook-signature']}`,
    };
    expect(verifyWebhook(older, both, payload)).toEqual(JSON.parse(payload));
    // …and the library accepts what we accept.
    expect(new Webhook(secret).verify(payload, both)).toEqual(JSON.parse(payload));
  });

  test('a changed body, id or secret, a stale time and missing headers are refused', () => {
    const headers = signedBy(secret, 'msg_2', new Date());
    const refuses = (thunk: () => unknown) => expect(thunk).toThrow(WebhookVerificationError);
    refuses(() => verifyWebhook(secret, headers, payload.replace('j-1', 'j-2')));
    refuses(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_3' }, payload));
    refuses(() => verifyWebhook(older, headers, payload));
    const stale = signedBy(secret, 'msg_4', new Date(Date.now() - 10 * 60_000));
    refuses(() => verifyWebhook(secret, stale, payload));
    expect(() => new Webhook(secret).verify(payload, stale)).toThrow();
    refuses(() => verifyWebhook(secret, { 'webhook-id': 'msg_5' }, payload));
  });
});

describe('WebhookDeduplicator: a receiver handles each webhook-id once', () => {
  const secret = `whsec_${Buffer.from('onejob-client-dedup-secret-0123456789').toString('base64')}`;
  const payload = JSON.stringify({ type: 'job.succeeded', data: { id: 'j-9' } });

  test('a delivery verified by the Standard Webhooks library and sent again is handled once; a forgotten one again', async () => {
    const deduplicator = new WebhookDeduplicator();
    const headers = {
      'webhook-id': 'msg_once',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_once', new Date(), payload),
    };
    const handled: string[] = [];
    const receive = async () => {
      new Webhook(secret).verify(payload, headers);
      if (!(await deduplicator.seenBefore(headers['webhook-id'])))
        handled.push(headers['webhook-id']);
    };
    // The same delivery three times, two of them at once (a retry racing a slow answer).
    await Promise.all([receive(), receive()]);
    await receive();
    expect(handled).toEqual(['msg_once']);
    // Its handling failed: forgotten, the next try of it is handled.
    await deduplicator.forget('msg_once');
    await receive();
    expect(handled).toEqual(['msg_once', 'msg_once']);
    await expect(deduplicator.seenBefore('')).rejects.toThrow(RangeError);
  });

  test('the memory store is bounded: an id is kept for the age given, and past the count the oldest goes first', async () => {
    let now = 1_000_000;
    const store = new MemoryWebhookIdStore({ maxIds: 3, now: () => now });
    const deduplicator = new WebhookDeduplicator({ store, maxAgeSeconds: 60, now: () => now });
    for (const id of ['a', 'b', 'c']) expect(await deduplicator.seenBefore(id)).toBe(false);
    expect(await deduplicator.seenBefore('a')).toBe(true);
    // A fourth id pushes out the oldest.
    expect(await deduplicator.seenBefore('d')).toBe(false);
    expect(store.size).toBe(3);
    expect(await deduplicator.seenBefore('a')).toBe(false);
    expect(await deduplicator.seenBefore('c')).toBe(true);
    // Past their age every id is gone, and the store is empty again.
    now += 60_001;
    expect(await deduplicator.seenBefore('c')).toBe(false);
    expect(store.size).toBe(1);
    // By default an id outlives onejob's 3 days of retries.
    const lasting = new WebhookDeduplicator({ now: () => now });
    expect(await lasting.seenBefore('x')).toBe(false);
    now += 3 * 24 * 3600 * 1000;
    expect(await lasting.seenBefore('x')).toBe(true);
  });
});
