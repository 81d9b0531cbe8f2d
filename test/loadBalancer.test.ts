import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { jobWorkflowId } from '../src/domain/workflowId';
import { startNginx, type LoadBalancer } from '../tools/stack/nginx';
import { freePort } from '../tools/stack/processes';
import { harness, TEST_OUTPUT } from './support/harness';
import { TEST_OWNER, TEST_TOKEN } from './support/identities';
import { providerSaw } from './support/providerLedger';
import { startTestStack, type TestStack } from './support/stack';
import { runsOfWorkflow } from './support/temporal';

/**
 * Two API replicas behind Debian's nginx, with the repository's configuration: 64 identical
 * POSTs at once are one job, one workflow and one provider call, whether nginx hashes on the
 * Idempotency-Key or spreads requests round-robin.
 */
let stack: TestStack;
let replicas: string[];
beforeAll(async () => {
  // The replicas name themselves (x-onejob-instance), which they do only when asked to.
  stack = await startTestStack({ env: { ONEJOB_INSTANCE_HEADER: 'true' } });
  const second = await stack.startExtraApi();
  replicas = [new URL(stack.apiUrl).host, `127.0.0.1:${second.port}`];
});
afterAll(async () => {
  await stack?.stop();
});

describe.each(['hash', 'round-robin'] as const)('nginx balancing by %s', (balance) => {
  let nginx: LoadBalancer;
  beforeAll(async () => {
    nginx = await startNginx({
      nginxPath: harness().nginxPath,
      dir: mkdtempSync(path.join(TEST_OUTPUT, `nginx-${balance}-`)),
      port: await freePort(),
      upstreams: replicas,
      balance,
    });
  });
  afterAll(async () => {
    await nginx?.stop();
  });

  test('64 concurrent identical POSTs through two replicas are one job, one workflow, one provider call', async () => {
    const key = `lb-${balance}`;
    const body = JSON.stringify({
      type: 'summarize',
      input: { text: `Balanced by ${balance}. Still one job.` },
    });
    const responses = await Promise.all(
      Array.from({ length: 64 }, () =>
        fetch(`${nginx.url}/v1/jobs`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TEST_TOKEN}`,
            'idempotency-key': key,
            'content-type': 'application/json',
          },
          body,
        }),
      ),
    );
    const jobs = (await Promise.all(responses.map((r) => r.json()))) as Array<{ id: string }>;
    expect(new Set(jobs.map((j) => j.id)).size).toBe(1);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(63);
    const instances = new Set(responses.map((r) => r.headers.get('x-onejob-instance')));
    // Hashing sends one key to one replica; round-robin spreads it over both.
    expect(instances.size).toBe(balance === 'hash' ? 1 : 2);

    const id = jobs[0]!.id;
    const { rows } = await stack.pool.query(
      'SELECT count(*)::int AS n FROM jobs WHERE owner_id = $1 AND idempotency_key = $2',
      [TEST_OWNER, key],
    );
    expect(rows[0].n).toBe(1);
    const done = (await (
      await fetch(`${nginx.url}/v1/jobs/${id}?wait=30`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      })
    ).json()) as { status: string };
    expect(done.status).toBe('succeeded');
    expect(await runsOfWorkflow(stack, jobWorkflowId(TEST_OWNER, key))).toHaveLength(1);
    expect(providerSaw(stack, id, 'chat')).toEqual({ requests: [`${id}:1`], effects: [`${id}:1`] });
  });

  test('/metrics is not passed on: behind nginx every caller would look like loopback to the API', async () => {
    const response = await fetch(`${nginx.url}/metrics`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ type: '/problems/not-found', status: 404 });
  });
});

describe('nginx in front of replicas that cannot answer', () => {
  let nginx: LoadBalancer;
  let unreachable: string[];
  beforeAll(async () => {
    // Ports with nothing listening: every replica refuses the connection.
    unreachable = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    nginx = await startNginx({
      nginxPath: harness().nginxPath,
      dir: mkdtempSync(path.join(TEST_OUTPUT, 'nginx-down-')),
      port: await freePort(),
      upstreams: unreachable,
      balance: 'round-robin',
    });
  });
  afterAll(async () => {
    await nginx?.stop();
  });

  test('answers a problem+json 503 with Retry-After, not its own HTML page, so clients retry with the same key', async () => {
    const response = await fetch(`${nginx.url}/v1/jobs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEST_TOKEN}`,
        'idempotency-key': 'lb-nobody-home',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ type: 'summarize', input: { text: 'Nobody answers.' } }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({
      type: '/problems/service-unavailable',
      status: 503,
    });
  });
});
