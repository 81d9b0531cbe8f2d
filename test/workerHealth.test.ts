import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { createLogger } from '../src/logger';
import { startLinkProxy, type LinkProxy } from '../tools/chaos/linkProxy';
import { builtProduct } from '../tools/stack/build';
import { freePort, type GuardedProcess } from '../tools/stack/processes';
import { postgresAddress, throughPort } from './support/database';
import { eventually } from './support/polling';
import { serviceProcesses } from './support/serviceProcesses';
import { useTestStack } from './support/stack';
import { startInProcessWorker } from './support/worker';

/**
 * The worker's own health endpoints (ONEJOB_WORKER_HEALTH_ADDRESS): /healthz says the process
 * answers, /readyz that PostgreSQL and Temporal answer and both of its workers' pollers take
 * tasks, as a problem naming what did not otherwise. The worker under test is a process of its
 * own, reaching PostgreSQL and Temporal through relays the tests cut and restore.
 */
const stack = useTestStack();
const run = promisify(execFile);

interface Answer {
  status: number;
  type: string | null;
  retryAfter: string | null;
  body: string;
}

async function get(url: string, method = 'GET'): Promise<Answer> {
  const response = await fetch(url, { method });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

/** The image's health check (dist/src/bin/healthcheck.js) with only `env`: its exit code and line. */
async function healthcheck(env: NodeJS.ProcessEnv): Promise<{ code: number; line: string }> {
  try {
    const { stdout } = await run(process.execPath, [builtProduct('bin', 'healthcheck.js')], {
      env: { PATH: process.env.PATH, ...env },
    });
    return { code: 0, line: stdout.trim() };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, line: failed.stdout.trim() };
  }
}

let health: string;
let worker: GuardedProcess;
let postgres: LinkProxy;
let temporal: LinkProxy;

beforeAll(async () => {
  postgres = await startLinkProxy(postgresAddress());
  const [host, port] = stack.serviceEnv.TEMPORAL_ADDRESS!.split(':');
  temporal = await startLinkProxy({ host: host!, port: Number(port) });
  const address = `127.0.0.1:${await freePort()}`;
  health = `http://${address}`;
  worker = await serviceProcesses({
    ...stack.serviceEnv,
    DATABASE_URL: throughPort(stack.databaseUrl, postgres.port),
    TEMPORAL_ADDRESS: `127.0.0.1:${temporal.port}`,
    // A queue of its own: this worker takes none of the stack's tasks.
    ONEJOB_TASK_QUEUE: `worker-health-${randomUUID()}`,
    ONEJOB_WORKER_HEALTH_ADDRESS: address,
  }).startWorker();
});

afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await postgres?.close();
  await temporal?.close();
});

test('a running worker is alive at /healthz and ready at /readyz, having checked PostgreSQL, Temporal and its pollers; it serves its metrics and nothing else there', async () => {
  const alive = await get(`${health}/healthz`);
  expect(alive).toMatchObject({ status: 200, type: expect.stringMatching(/^application\/json/) });
  expect(JSON.parse(alive.body)).toEqual({ ok: true });

  const ready = await eventually(
    () => get(`${health}/readyz`),
    (answer) => answer.status === 200,
  );
  expect(JSON.parse(ready.body)).toEqual({
    ready: true,
    checks: {
      postgres: { ok: true, ms: expect.any(Number) },
      temporal: { ok: true, ms: expect.any(Number) },
      pollers: { ok: true, ms: expect.any(Number) },
    },
  });

  // Its own metrics too, to a loopback caller (no metrics token here), as the API serves its.
  const metrics = await get(`${health}/metrics`);
  expect(metrics).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/plain/) });
  expect(metrics.body).toContain('# TYPE onejob_provider_call_duration_seconds histogram');

  for (const [path, method] of [
    ['/docs', 'GET'],
    ['/readyz', 'POST'],
  ] as const) {
    const other = await get(`${health}${path}`, method);
    expect(other).toMatchObject({ status: 404, type: 'application/problem+json' });
    expect(JSON.parse(other.body)).toMatchObject({
      type: '/problems/not-found',
      detail: `No route ${method} ${path}.`,
    });
  }
});

test.each([
  ['postgres', () => postgres],
  ['temporal', () => temporal],
] as const)(
  'a worker cut off from %s says not ready, naming it and no address, and ready again once it answers, without a restart',
  async (name, relay) => {
    await eventually(
      () => get(`${health}/readyz`),
      (answer) => answer.status === 200,
    );
    await relay().breakWith({ kind: 'refuse' });
    try {
      const away = await get(`${health}/readyz`);
      expect(away).toMatchObject({
        status: 503,
        type: 'application/problem+json',
        retryAfter: '5',
      });
      const problem = JSON.parse(away.body) as { checks: Record<string, { ok: boolean }> };
      expect(problem).toMatchObject({
        type: '/problems/service-unavailable',
        detail: `Not ready: ${name} did not answer.`,
        checks: { [name]: { ok: false, reason: expect.any(String) } },
      });
      expect(Object.entries(problem.checks).filter(([, check]) => !check.ok)).toHaveLength(1);
      expect(away.body).not.toContain(String(relay().port));
    } finally {
      await relay().heal();
    }
    await eventually(
      () => get(`${health}/readyz`),
      (answer) => answer.status === 200,
      60_000,
    );
    expect(worker.child.exitCode).toBeNull();
  },
);

test("the image's health check asks the API's /readyz, or the worker's where no API listens, and passes only on 200", async () => {
  const apiPort = new URL(stack.apiUrl).port;
  const workerAddress = new URL(health).host;
  const nobody = String(await freePort());
  const api = await healthcheck({ PORT: apiPort, ONEJOB_WORKER_HEALTH_ADDRESS: 'off' });
  expect(api).toEqual({ code: 0, line: expect.stringMatching(/\/readyz: 200 \{"ready":true/) });
  // The worker's container: no API on PORT, the worker's check at its address (a wildcard there
  // is asked on loopback).
  const wildcard = `0.0.0.0:${workerAddress.split(':')[1]}`;
  const worker = await healthcheck({ PORT: nobody, ONEJOB_WORKER_HEALTH_ADDRESS: wildcard });
  expect(worker).toEqual({ code: 0, line: expect.stringContaining('"pollers":{"ok":true') });

  await postgres.breakWith({ kind: 'refuse' });
  try {
    const unready = await healthcheck({
      PORT: nobody,
      ONEJOB_WORKER_HEALTH_ADDRESS: workerAddress,
    });
    expect(unready).toEqual({ code: 1, line: expect.stringMatching(/\/readyz: 503 /) });
  } finally {
    await postgres.heal();
  }
  const nothing = await healthcheck({ PORT: nobody, ONEJOB_WORKER_HEALTH_ADDRESS: 'off' });
  expect(nothing).toEqual({ code: 1, line: 'neither the API nor the worker answers here' });
});

test('a worker whose pollers do not run is not ready: before it runs, and once it is shutting down', async () => {
  const queue = `pollers-${randomUUID()}`;
  const started = await startInProcessWorker(
    {
      temporal: stack.temporal,
      pool: stack.pool,
      providers: stack.registry,
      logger: createLogger('worker-health-test', 'warn'),
      serviceEnv: stack.serviceEnv,
    },
    queue,
    { run: false },
  );
  // The job queue's worker, the provider calls' and the webhook sends'.
  expect(started.workers.notPolling()).toEqual([
    `${queue}: initialized`,
    expect.any(String),
    `${queue}-webhooks: initialized`,
  ]);
  const running = started.run();
  await eventually(
    async () => started.workers.notPolling(),
    (trouble) => trouble.length === 0,
  );
  started.workers.shutdown();
  expect(started.workers.notPolling()).toEqual([
    expect.stringMatching(new RegExp(`^${queue}: (stopping|draining|drained|stopped)$`)),
    expect.stringMatching(/: (stopping|draining|drained|stopped)$/),
    expect.stringMatching(/-webhooks: (stopping|draining|drained|stopped)$/),
  ]);
  await running;
  await started.stop();
});
