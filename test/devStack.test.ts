import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { DEV_TOKEN } from '../src/api/auth';
import { freePort } from '../src/dev/processes';
import { harness, ROOT, TEST_OUTPUT } from './harness';
import { processesMentioning, waitUntil } from './processScan';

/**
 * `npm start` for real: the supervisor, a Temporal dev server with its Web UI, PostgreSQL,
 * the simulator, the worker and the API as separate processes, driven over HTTP.
 */
interface RunningStack {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const stateDir = mkdtempSync(path.join(TEST_OUTPUT, 'dev-stack-'));
const databaseName = `onejob_devstack_${Date.now()}`;
let ports: { api: number; temporal: number; ui: number; simulator: number };

async function startStack(): Promise<RunningStack> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_CLI_PATH: harness().temporalCliPath,
    ONEJOB_STATE_DIR: stateDir,
    ONEJOB_DATABASE_NAME: databaseName,
    PORT: String(ports.api),
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    SIMULATOR_PORT: String(ports.simulator),
    LOG_LEVEL: 'warn',
  };
  delete env.ONEJOB_API_TOKENS;
  delete env.TEMPORAL_ADDRESS;
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'dev', 'start.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const ready = await waitUntil(
    () => output.includes('onejob is running') || child.exitCode !== null,
    120_000,
  );
  if (!ready || child.exitCode !== null)
    throw new Error(`npm start did not become ready:\n${output}`);
  return { process: child, output: () => output, exited };
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

beforeAll(async () => {
  ports = {
    api: await freePort(),
    temporal: await freePort(),
    ui: await freePort(),
    simulator: await freePort(),
  };
});

afterAll(async () => {
  for (const { pid } of processesMentioning(stateDir)) process.kill(pid, 'SIGKILL');
  const { adminDatabaseUrl } = harness();
  if (!process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: adminDatabaseUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    await admin.end();
  }
});

test('npm start serves a job to success, keeps it across a restart, and leaves no process behind', async () => {
  // First run: prints the dev token and URLs, runs a job through every layer.
  let stack = await startStack();
  expect(stack.output()).toContain(`Dev API token   ${DEV_TOKEN}`);
  expect(stack.output()).toContain(`Temporal Web UI http://127.0.0.1:${ports.ui}`);

  const created = await api('/v1/jobs', {
    method: 'POST',
    headers: { 'idempotency-key': 'dev-stack-job' },
    body: JSON.stringify({
      type: 'summarize',
      input: { text: 'The stack is real. Every layer takes part in this job.' },
    }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const finished = await (await api(`/v1/jobs/${id}?wait=30`)).json();
  expect(finished).toMatchObject({
    status: 'succeeded',
    result: { summary: 'The stack is real.' },
  });

  const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
  expect(ui.status).toBe(200);
  expect(await ui.text()).toMatch(/<html/i);

  // Ctrl-C (SIGINT): everything stops, cleanly, and nothing of ours is left running.
  stack.process.kill('SIGINT');
  expect(await stack.exited).toBe(0);
  expect(await waitUntil(() => processesMentioning(stateDir).length === 0, 20_000)).toBe(true);

  // Second run on the same state folder: the job and its workflow history are still there.
  stack = await startStack();
  const again = (await (await api(`/v1/jobs/${id}`)).json()) as { workflowId: string };
  expect(again).toMatchObject({ id, status: 'succeeded' });
  const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
  try {
    const description = await new Client({ connection }).workflow
      .getHandle(again.workflowId)
      .describe();
    expect(description.status.name).toBe('COMPLETED');
  } finally {
    await connection.close();
  }

  // Even a supervisor killed outright takes its children with it (they watch their IPC link).
  stack.process.kill('SIGKILL');
  await stack.exited;
  const leftovers = await waitUntil(() => processesMentioning(stateDir).length === 0, 30_000);
  expect(leftovers ? [] : processesMentioning(stateDir)).toEqual([]);
});
