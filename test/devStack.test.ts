import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DEV_TOKEN } from '../src/domain/publishedSecrets';
import { ensureDatabase, withDatabase } from '../tools/stack/postgres';
import { childPids, freePort, processGroup } from '../tools/stack/processes';
import { runDevStart, untilRunning, type StartedStack, exitOf } from './support/devStart';
import { harness, ROOT, TEST_OUTPUT } from './support/harness';
import { eventually } from './support/polling';
import { processesMentioning, waitUntil } from './support/processScan';
import { WebhookReceiver } from './support/webhookReceiver';

/**
 * `npm start` for real: the supervisor, a Temporal dev server with its Web UI, PostgreSQL,
 * the simulator, the worker and the API as separate processes, driven over HTTP.
 */
const stateDir = mkdtempSync(path.join(TEST_OUTPUT, 'dev-stack-'));
const stateDirs = [stateDir];
const databaseName = `onejob_devstack_${Date.now()}`;
let ports: {
  api: number;
  temporal: number;
  ui: number;
  simulator: number;
  workerMetrics: number;
  workerHealth: number;
  traceQuery: number;
  traceOtlp: number;
};

async function startStack(extraEnv: NodeJS.ProcessEnv = {}, dir = stateDir): Promise<StartedStack> {
  const stack = runDevStart({
    ONEJOB_STATE_DIR: dir,
    ONEJOB_DATABASE_NAME: databaseName,
    PORT: String(ports.api),
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    SIMULATOR_PORT: String(ports.simulator),
    ONEJOB_WORKER_METRICS_ADDRESS: `127.0.0.1:${ports.workerMetrics}`,
    ONEJOB_WORKER_HEALTH_ADDRESS: `127.0.0.1:${ports.workerHealth}`,
    JAEGER_QUERY_PORT: String(ports.traceQuery),
    JAEGER_OTLP_PORT: String(ports.traceOtlp),
    OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
    TEMPORAL_ADDRESS: undefined,
    // With DATABASE_URL set the stack uses it as is: point it at this test's own database.
    ...(process.env.DATABASE_URL
      ? { DATABASE_URL: withDatabase(process.env.DATABASE_URL, databaseName) }
      : {}),
    ...extraEnv,
  });
  await untilRunning(stack, 120_000);
  return stack;
}

function api(pathname: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${ports.api}${pathname}`, {
    ...init,
    headers: {
      authorization: `Bearer ${DEV_TOKEN}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  });
}

/** The simulator's, the worker's and the API's scripts, as their command lines name them. */
const SERVICE_SCRIPT = /bin\/(api|worker)\.js|simulator\/main\.js/;

/** POSTs a summarize job, waits for it, and checks it succeeded with the first sentence. */
async function summarizeAndWait(
  key: string,
  text: string,
): Promise<{ id: string; workflowId: string }> {
  const created = await api('/v1/jobs', {
    method: 'POST',
    headers: { 'idempotency-key': key },
    body: JSON.stringify({ type: 'summarize', input: { text } }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const finished = (await (await api(`/v1/jobs/${id}?wait=30`)).json()) as { workflowId: string };
  expect(finished).toMatchObject({
    id,
    status: 'succeeded',
    result: { summary: `${text.split('. ')[0]}.` },
  });
  return { id, workflowId: finished.workflowId };
}

/**
 * The client package's README example, as it is, run against the API on `apiPort` with no
 * token given (its default is npm start's development token). `onejob-client` resolves to the
 * package's source. Returns what it printed.
 */
async function runClientExample(apiPort: number): Promise<string> {
  const project = mkdtempSync(path.join(TEST_OUTPUT, 'client-example-'));
  copyFileSync(
    path.join(ROOT, 'client', 'examples', 'quickstart.ts'),
    path.join(project, 'quickstart.ts'),
  );
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        paths: { 'onejob-client': [path.join(ROOT, 'client', 'src', 'index.ts')] },
      },
    }),
  );
  const { ONEJOB_TOKEN: _unset, ...env } = process.env;
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'quickstart.ts'],
      {
        cwd: project,
        env: { ...env, ONEJOB_URL: `http://127.0.0.1:${apiPort}` },
        timeout: 120_000,
      },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

beforeAll(async () => {
  if (process.env.DATABASE_URL) await ensureDatabase(process.env.DATABASE_URL, databaseName);
  ports = {
    api: await freePort(),
    temporal: await freePort(),
    ui: await freePort(),
    simulator: await freePort(),
    workerMetrics: await freePort(),
    workerHealth: await freePort(),
    traceQuery: await freePort(),
    traceOtlp: await freePort(),
  };
});

afterAll(async () => {
  // Only if a test failed half-way: nothing of a stack may outlive the run.
  for (const dir of stateDirs)
    for (const { pid } of processesMentioning(dir)) process.kill(pid, 'SIGKILL');
  const { adminDatabaseUrl } = harness();
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.end();
});

test('npm start serves a job to success, keeps it across a restart, and leaves no process behind', async () => {
  // First run: prints the dev token and URLs, runs a job through every layer.
  let stack = await startStack();
  expect(stack.output()).toContain(`Dev API token   ${DEV_TOKEN}`);
  expect(stack.output()).toContain(`Temporal Web UI http://127.0.0.1:${ports.ui}`);

  const { id } = await summarizeAndWait(
    'dev-stack-job',
    'The stack is real. Every layer takes part in this job.',
  );

  // The client package's README example runs as it is against npm start.
  const example = await runClientExample(ports.api);
  expect(example).toMatch(/^job [0-9a-f-]{36} succeeded: \{"summary":/m);

  // A receiver registered for the dev owner hears of a job's ending, signed.
  const receiver = await WebhookReceiver.start();
  try {
    const registered = await api('/v1/webhooks', {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url, events: ['job.succeeded'] }),
    });
    expect(registered.status).toBe(201);
    receiver.secret = ((await registered.json()) as { secret: string }).secret;
    const notified = await summarizeAndWait('dev-stack-webhook', 'Told, not asked. Pushed.');
    const [event] = await eventually(
      async () => receiver.of(notified.id),
      (got) => got.length > 0,
    );
    expect(event!.verified).toMatchObject({
      type: 'job.succeeded',
      data: { id: notified.id, status: 'succeeded' },
    });
  } finally {
    await receiver.down();
  }

  const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
  expect(ui.status).toBe(200);
  expect(await ui.text()).toMatch(/<html/i);

  // Both services say ready where the banner says: the API and the worker (its pollers too).
  const workerReadiness = `http://127.0.0.1:${ports.workerHealth}/readyz`;
  expect(stack.output()).toContain(
    `Readiness       http://127.0.0.1:${ports.api}/readyz (API), ${workerReadiness} (worker)`,
  );
  for (const url of [`http://127.0.0.1:${ports.api}/readyz`, workerReadiness])
    expect((await fetch(url)).status).toBe(200);

  // Jaeger (cached: started with the stack) where the banner says, with the API's spans in it.
  const traces = `http://127.0.0.1:${ports.traceQuery}`;
  expect(stack.output()).toContain(`query API     ${traces}/api/services`);
  await eventually(
    async () =>
      ((await (await fetch(`${traces}/api/services`)).json()) as { data: string[] | null }).data ??
      [],
    (services) => services.includes('onejob-api'),
  );

  // The simulator, the worker and the API are not in the terminal's group: Ctrl-C reaches only
  // the supervisor, which stops them in order (one that took the SIGINT itself could exit before
  // the supervisor heard its own, and be taken for a crash).
  const supervisor = stack.process.pid!;
  const children = childPids(supervisor);
  const services = processesMentioning(stateDir)
    .filter(({ pid, command }) => children.includes(pid) && SERVICE_SCRIPT.test(command))
    .map(({ pid }) => pid);
  expect(services).toHaveLength(3);
  const supervisorGroup = processGroup(supervisor);
  expect(supervisorGroup).toEqual(expect.any(Number));
  for (const pid of services) expect(processGroup(pid)).not.toBe(supervisorGroup);

  // Ctrl-C: the terminal sends SIGINT to the whole foreground group at once. Everything
  // stops cleanly and nothing of ours is left running.
  process.kill(-supervisor, 'SIGINT');
  expect(await exitOf(stack)).toEqual({ code: 0 });
  expect(await waitUntil(() => processesMentioning(stateDir).length === 0, 20_000)).toBe(true);

  // Second run on the same state folder: the job and its workflow history are still there.
  stack = await startStack();
  let killed = false;
  try {
    const again = (await (await api(`/v1/jobs/${id}`)).json()) as { workflowId: string };
    expect(again).toMatchObject({ id, status: 'succeeded' });
    // The row ends before the workflow's last task runs, and the wait answers on the row, so
    // the Ctrl-C may have come first: the restarted worker then finishes the workflow.
    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
    try {
      const handle = new Client({ connection }).workflow.getHandle(again.workflowId);
      const closed = await eventually(
        () => handle.describe(),
        (d) => d.status.name !== 'RUNNING',
      );
      expect(closed.status.name).toBe('COMPLETED');
    } finally {
      await connection.close();
    }

    // Even a supervisor killed outright takes its children with it (they watch their IPC link).
    stack.process.kill('SIGKILL');
    killed = true;
    await stack.exited;
    const leftovers = await waitUntil(() => processesMentioning(stateDir).length === 0, 30_000);
    expect(leftovers ? [] : processesMentioning(stateDir)).toEqual([]);
  } finally {
    // A failed check above must not leave this stack holding the ports the next test uses.
    if (!killed) {
      process.kill(-stack.process.pid!, 'SIGTERM');
      await stack.exited;
    }
  }
});

test('with TEMPORAL_ADDRESS set, npm start uses that server and starts none of its own', async () => {
  const dir = mkdtempSync(path.join(TEST_OUTPUT, 'dev-stack-external-'));
  stateDirs.push(dir);
  const stack = await startStack(
    {
      TEMPORAL_ADDRESS: harness().temporalAddress,
      ONEJOB_TASK_QUEUE: `devstack-external-${Date.now()}`,
    },
    dir,
  );
  try {
    expect(stack.output()).toContain(
      `Temporal: using ${harness().temporalAddress} (TEMPORAL_ADDRESS); starting no server`,
    );
    expect(stack.output()).not.toContain('Temporal Web UI');
    const ours = processesMentioning(dir).map((p) => p.command);
    expect(ours.filter((command) => command.includes('temporal server'))).toEqual([]);

    await summarizeAndWait('external-temporal-job', 'One server for all. Nothing else started.');
  } finally {
    stack.process.kill('SIGTERM');
    expect(await exitOf(stack)).toEqual({ code: 0 });
  }
  expect(await waitUntil(() => processesMentioning(dir).length === 0, 20_000)).toBe(true);
});
