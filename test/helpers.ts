import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import pg from 'pg';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { migrate } from '../src/db/migrate';
import { createPool, type Pool } from '../src/db/pool';
import { withDatabase } from '../src/dev/postgres';
import { freePort, spawnNodeScript, type GuardedProcess } from '../src/dev/processes';
import { createLogger } from '../src/logger';
import type {
  AnthropicConfig,
  HttpProviderConfig,
  OpenAiCompatibleConfig,
  ProviderConfig,
} from '../src/providers/provider';
import { ProviderRegistry, providerConfigsFromEnv } from '../src/providers/registry';
import { startSimulator, type SimulatorServer } from '../src/simulator/server';
import type { SimulatorRoute } from '../src/simulator/faults';
import { createJobWorkers, workerSettings } from '../src/worker';
import { workerConfig } from '../src/config';
import { certifyProvider, type CertificationReport } from '../src/certification/certify';
import { harness, ROOT } from './harness';
import { statusQuery } from '../src/workflows/definitions';

// Keep the SDK's own logging to warnings so test output stays readable.
let runtimeInstalled = false;
function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed by an earlier file in the same process.
  }
}

export const TEST_OWNER = 'owner-a@example.com';
export const TEST_TOKEN = 'token-owner-a-0001';
export const OTHER_OWNER = 'org/team:b';
export const OTHER_TOKEN = 'token-owner-b-0002';
export const OPERATOR = 'ops-alice';
export const OPERATOR_TOKEN = 'token-operator-0001';
export const CALLBACK_SECRET = 'test-callback-secret';
/** Owners whose names play separator tricks on each other, by token. */
export const TRICK_OWNERS = {
  a: 'token-trick-plain',
  'a:b': 'token-trick-colon',
  'a/b': 'token-trick-slash',
} as const;

function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** A fresh database with every migration applied; dropped by the returned function. */
export async function createTestDatabase(): Promise<{
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}> {
  const { adminDatabaseUrl } = harness();
  const name = uniqueName('onejob_test');
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  const url = withDatabase(adminDatabaseUrl, name);
  const pool = createPool(url);
  await migrate(pool);
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: adminDatabaseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await client.end();
    },
  };
}

async function waitForHealthy(
  url: string,
  proc: GuardedProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && proc.child.exitCode === null) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the API process did not become healthy:\n${output()}`);
}

export interface TestStack {
  apiUrl: string;
  /** This stack's own database. */
  databaseUrl: string;
  /** The environment the API and worker processes get. */
  serviceEnv: NodeJS.ProcessEnv;
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  simulator: SimulatorServer;
  /** The API as its own process (dist/bin/api.js), as it runs in production. */
  api: GuardedProcess;
  apiOutput(): string;
  /** Every JSON log line the stack's worker and API wrote, parsed: what an operator would read. */
  serviceLogs(): Array<Record<string, unknown>>;
  /** Provider adapters configured as the services have them (pointed at this stack's simulator). */
  registry: ProviderRegistry;
  /** A worker in this process on another task queue, with this stack's database and providers. */
  startWorkerOn(taskQueue: string): Promise<void>;
  /** Another API process (a second replica) on the same database, Temporal and task queue. */
  startExtraApi(): Promise<{ url: string; port: number; stop(): Promise<void> }>;
  /** Runs the golden cases of a job type through a provider and stores the verdict. */
  certify(provider: string, jobType: string): Promise<CertificationReport>;
  /** With workerProcess: SIGKILL (or another signal to) the worker, mid-attempt say … */
  killWorker(signal?: NodeJS.Signals): Promise<number | null>;
  /** … and start a fresh one. */
  restartWorker(): Promise<void>;
  /** fetch against the API with an owner's token. */
  request(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; token?: string },
  ): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * The real system for one test file: its own database and task queue on the shared Temporal
 * server, a real worker, the real API as its own process on a random port, and the provider
 * simulator. The worker runs in the test process unless `workerProcess` asks for its own.
 */
export interface TestStackOptions {
  /** Run the worker as its own process (dist/bin/worker.js), e.g. to kill it. */
  workerProcess?: boolean;
  /** Provider configs, given the simulator's URL; default: the simulator's standard providers. */
  providers?: (simulatorUrl: string) => ProviderConfig[];
  /** Hedge delay while no p95 is known. */
  hedgeDelayMs?: number;
  /** More settings for the API and the worker, as environment variables (ONEJOB_…). */
  env?: NodeJS.ProcessEnv;
  /** The API process's own DATABASE_URL, given the stack's (e.g. through a TCP proxy). */
  apiDatabaseUrl?: (databaseUrl: string) => string;
}

/** The simulators of the stacks this test file has running (see clearFaultsAfterEachTest). */
const liveSimulators = new Set<SimulatorServer>();

/**
 * Drops every fault a test queued and did not use up, on every stack of the file, so that a
 * one-shot fault never meets the next test's request. Registered for every file by
 * test/setupEachFile.ts.
 */
export function clearUnusedFaults(): void {
  for (const simulator of liveSimulators) simulator.clearFaults();
}

export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  quietTemporalRuntime();
  const info = harness();
  const database = await createTestDatabase();
  const taskQueue = uniqueName('onejob-test');
  const simulator = await startSimulator();
  // The in-process worker logs into memory, so tests can read what an operator would see.
  const workerLogLines: string[] = [];
  const logger = createLogger('onejob-test', 'info', {
    write: (line: string) => void workerLogLines.push(line),
  });
  const port = await freePort();
  const serviceEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: info.temporalAddress,
    ONEJOB_TASK_QUEUE: taskQueue,
    ONEJOB_SIMULATOR_URL: simulator.url,
    ...(options.providers
      ? { ONEJOB_PROVIDERS: JSON.stringify(options.providers(simulator.url)) }
      : {}),
    ONEJOB_OPERATOR_TOKENS: `${OPERATOR}:${OPERATOR_TOKEN}`,
    ONEJOB_SIMULATOR_CALLBACK_SECRET: CALLBACK_SECRET,
    ONEJOB_HEDGE_DELAY_MS: String(options.hedgeDelayMs ?? 2_000),
    ONEJOB_API_TOKENS: [
      `${TEST_OWNER}:${TEST_TOKEN}`,
      `${OTHER_OWNER}:${OTHER_TOKEN}`,
      ...Object.entries(TRICK_OWNERS).map(([owner, token]) => `${owner}:${token}`),
    ].join(','),
    HOST: '127.0.0.1',
    PORT: String(port),
    ONEJOB_WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...options.env,
  };

  let output = '';
  const spawnService = (name: 'api' | 'worker', env: NodeJS.ProcessEnv = {}): GuardedProcess => {
    const child = spawnNodeScript(path.join(ROOT, 'dist', 'bin', `${name}.js`), [], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: { ...serviceEnv, ...env },
    });
    child.child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return child;
  };

  const connection = await Connection.connect({ address: info.temporalAddress });
  const temporal = new Client({ connection, namespace: 'default' });
  const registry = new ProviderRegistry(providerConfigsFromEnv(serviceEnv), serviceEnv);

  let workerProcess: GuardedProcess | undefined;
  const startWorkerProcess = async (): Promise<GuardedProcess> => {
    const child = spawnService('worker');
    await new Promise<void>((resolve, reject) => {
      child.child.on('message', (message: { ready?: boolean }) => message.ready && resolve());
      void child.exited.then(() => reject(new Error(`the worker process exited:\n${output}`)));
    });
    return child;
  };
  /** A worker in this process (workflows, bookkeeping and provider calls) on a task queue. */
  const inProcessWorker = async (queue: string): Promise<{ stop(): Promise<void> }> => {
    const nativeConnection = await NativeConnection.connect({ address: info.temporalAddress });
    const worker = await createJobWorkers({
      temporal,
      connection: nativeConnection,
      namespace: 'default',
      taskQueue: queue,
      pool: database.pool,
      providers: registry,
      logger,
      ...workerSettings(workerConfig(serviceEnv)),
      workflowBundle: { codePath: info.workflowBundlePath },
    });
    const workerRun = worker.run();
    return {
      async stop() {
        worker.shutdown();
        await workerRun;
        await nativeConnection.close();
      },
    };
  };
  const extraWorkers: Array<{ stop(): Promise<void> }> = [];
  let stopWorker: () => Promise<void>;
  if (options.workerProcess) {
    workerProcess = await startWorkerProcess();
    stopWorker = async () => workerProcess?.stop();
  } else {
    const worker = await inProcessWorker(taskQueue);
    stopWorker = () => worker.stop();
  }

  const extraApis: GuardedProcess[] = [];
  const api = spawnService(
    'api',
    options.apiDatabaseUrl ? { DATABASE_URL: options.apiDatabaseUrl(database.url) } : {},
  );
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitForHealthy(`${apiUrl}/healthz`, api, () => output);
  liveSimulators.add(simulator);

  return {
    apiUrl,
    databaseUrl: database.url,
    serviceEnv,
    pool: database.pool,
    temporal,
    taskQueue,
    simulator,
    api,
    apiOutput: () => output,
    serviceLogs: () =>
      [...workerLogLines, ...output.split('\n')].flatMap((line) => {
        if (!line.startsWith('{')) return [];
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    registry,
    async startWorkerOn(queue) {
      extraWorkers.push(await inProcessWorker(queue));
    },
    async startExtraApi() {
      const extraPort = await freePort();
      const extra = spawnService('api', { PORT: String(extraPort) });
      const url = `http://127.0.0.1:${extraPort}`;
      await waitForHealthy(`${url}/healthz`, extra, () => output);
      extraApis.push(extra);
      return { url, port: extraPort, stop: () => extra.stop() };
    },
    certify: (provider, jobType) =>
      certifyProvider({ db: database.pool, provider: registry.get(provider), jobType }),
    async killWorker(signal = 'SIGKILL') {
      if (!workerProcess)
        throw new Error(
          'the worker runs in this process; start the stack with workerProcess: true',
        );
      workerProcess.child.kill(signal);
      return workerProcess.exited;
    },
    async restartWorker() {
      workerProcess = await startWorkerProcess();
    },
    request(method, path, options = {}) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.token ?? TEST_TOKEN}`,
        ...options.headers,
      };
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      return fetch(`${apiUrl}${path}`, { method, headers, body });
    },
    async stop() {
      for (const extra of extraApis) await extra.stop();
      await api.stop();
      // The simulator first: calls still hanging on it end at once, so the worker stops promptly.
      liveSimulators.delete(simulator);
      await simulator.close();
      for (const extra of extraWorkers) await extra.stop();
      await stopWorker();
      await connection.close();
      await database.drop();
    },
  };
}

/** Polls until `read` returns something for which `done` holds, or fails with the last value. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline)
      throw new Error(
        `condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

export interface AttemptRow {
  id: string;
  seq: number;
  provider: string;
  state: string;
  created_at: Date;
  finished_at: Date | null;
}

export async function attemptRows(pool: Pool, jobId: string): Promise<AttemptRow[]> {
  const { rows } = await pool.query<AttemptRow>(
    'SELECT id, seq, provider, state, created_at, finished_at FROM attempts WHERE job_id = $1 ORDER BY seq',
    [jobId],
  );
  return rows;
}

/** Runs the `onejob` CLI (dist/cli/main.js) against a stack's database and Temporal. */
export function runCli(
  stack: TestStack,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'main.js'), ...args], {
      env: {
        ...process.env,
        DATABASE_URL: stack.databaseUrl,
        TEMPORAL_ADDRESS: harness().temporalAddress,
        LOG_LEVEL: 'silent',
        ...extraEnv,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A payment-like provider on the simulator, with its status lookup unless told otherwise. */
export function payProvider(
  url: string,
  name: string,
  options: Partial<HttpProviderConfig> = {},
): ProviderConfig {
  return {
    name,
    kind: 'http',
    url: `${url}/v1/charges`,
    statusUrl: `${url}/v1/charges/by-key/{key}`,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 20_000,
    sideEffects: true,
    ...options,
  };
}

/** An OpenAI-compatible chat provider on the simulator, serving one of its models. */
export function chatProvider(
  url: string,
  name: string,
  model: string,
  options: Partial<OpenAiCompatibleConfig> = {},
): ProviderConfig {
  return {
    name,
    kind: 'openai-compatible',
    baseUrl: `${url}/v1`,
    model,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 20_000,
    sideEffects: false,
    ...options,
  };
}

/** An Anthropic Messages provider on the simulator, serving one of its models. */
export function anthropicProvider(
  url: string,
  name: string,
  model: string,
  options: Partial<AnthropicConfig> = {},
): ProviderConfig {
  return {
    name,
    kind: 'anthropic',
    baseUrl: url,
    model,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 3_000,
    sideEffects: false,
    ...options,
  };
}

/** A job as the API shows it (the fields tests read). */
export interface JobView {
  id: string;
  status: string;
  input: Record<string, unknown>;
  workflowId: string;
  result: Record<string, unknown> | null;
  completedBy: string | null;
  failure: Record<string, unknown> | null;
  notes: Array<Record<string, unknown>>;
  attempts: Array<{
    id: string;
    seq: number;
    state: string;
    provider: string;
    error: Record<string, unknown> | null;
    rawOutput: unknown;
  }>;
}

let keyCounter = 0;
/** A key no other test uses. */
export function freshKey(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++keyCounter}`;
}

/** POST /v1/jobs with a fresh key; expects 201. */
export async function createJob(
  stack: TestStack,
  body: unknown,
  key = freshKey('job'),
): Promise<JobView> {
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body,
  });
  if (response.status !== 201)
    throw new Error(`create ${key}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as JobView;
}

export async function readJob(stack: TestStack, id: string): Promise<JobView> {
  return (await (await stack.request('GET', `/v1/jobs/${id}`)).json()) as JobView;
}

/** Polls the job until `done` holds. */
export function untilJob(
  stack: TestStack,
  id: string,
  done: (job: JobView) => boolean,
  timeoutMs = 30_000,
): Promise<JobView> {
  return eventually(() => readJob(stack, id), done, timeoutMs);
}

/** What the job's workflow says of itself (its status query). */
export async function workflowStatus(stack: TestStack, workflowId: string) {
  return stack.temporal.workflow.getHandle(workflowId).query(statusQuery);
}

/** Requests of a job's attempts that reached the simulator on a route (every one, faults too). */
export function requestsFor(stack: TestStack, jobId: string, route: SimulatorRoute = 'charge') {
  return stack.simulator
    .requests()
    .filter((r) => r.route === route && r.idempotencyKey.startsWith(`${jobId}:`));
}

/** Side effects the simulator performed for a job's attempts on a route (e.g. charges made). */
export function effectsFor(stack: TestStack, jobId: string, route: SimulatorRoute = 'charge') {
  return stack.simulator
    .ledger()
    .filter((e) => e.route === route && e.idempotencyKey.startsWith(`${jobId}:`));
}

/**
 * What the provider saw of a job on a route, in the provider's own terms: the attempt ids of the
 * requests that reached it, in arrival order (faulted and replayed ones too), and one entry per
 * time it really did the work (a key listed twice means it worked twice, i.e. charged twice).
 */
export function providerSaw(
  stack: TestStack,
  jobId: string,
  route: SimulatorRoute = 'charge',
): { requests: string[]; effects: string[] } {
  return {
    requests: requestsFor(stack, jobId, route).map((r) => r.idempotencyKey),
    effects: effectsFor(stack, jobId, route).flatMap((e) =>
      Array.from({ length: e.executions }, () => e.idempotencyKey),
    ),
  };
}

/** A charge body with an account of its own. */
export function chargeBody(providers: string[], account = freshKey('acct')) {
  return {
    type: 'charge',
    input: { amountCents: 1250, currency: 'EUR', account },
    providers,
  };
}

/** Operator routes with the operator's token. */
export function operator(stack: TestStack, method: string, path: string, body: unknown) {
  return stack.request(method, `/v1/operator${path}`, { body, token: OPERATOR_TOKEN });
}

/**
 * A barrier in PostgreSQL: a transaction the test holds open. Whatever it locks (with `lock`,
 * or by writing through `client`) stops the system's conflicting statements until `release()`
 * commits; the test sees the blocked statement in pg_stat_activity, acts, then lets it go on.
 */
export async function holdTransaction(stack: TestStack, lock?: string) {
  const client = await stack.pool.connect();
  await client.query('BEGIN');
  if (lock) await client.query(lock);
  return {
    /** Runs in the barrier's own transaction (its writes are not blocked). */
    client,
    /** Waits until a statement that starts with `prefix` waits for the barrier. */
    async blocked(prefix: string): Promise<void> {
      await eventually(
        async () =>
          (
            await stack.pool.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'
                  AND ltrim(query) ILIKE $1`,
              [`${prefix}%`],
            )
          ).rows[0].n as number,
        (n) => n > 0,
      );
    },
    async release(): Promise<void> {
      await client.query('COMMIT');
      client.release();
    },
  };
}

/**
 * Everything the database holds of one job: its row, its attempts and its race events. A refused
 * action is checked by comparing this before and after: a refusal changes nothing.
 */
export async function rowsOfJob(stack: TestStack, jobId: string) {
  const [job, attempts, races] = await Promise.all([
    stack.pool.query('SELECT * FROM jobs WHERE id = $1', [jobId]),
    stack.pool.query('SELECT * FROM attempts WHERE job_id = $1 ORDER BY seq', [jobId]),
    stack.pool.query('SELECT * FROM race_events WHERE job_id = $1 ORDER BY id', [jobId]),
  ]);
  return { job: job.rows, attempts: attempts.rows, races: races.rows };
}

/**
 * Runs statements the database is expected to refuse inside a transaction that is always rolled
 * back, so a surprise success cannot leave a stray row behind for the rest of the file.
 */
export async function inRolledBackTransaction<T>(
  pool: Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    return await work(client);
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

/** A barrier that lets every read through but stops every write to `attempts`. */
export function holdAttemptWrites(stack: TestStack) {
  return holdTransaction(stack, 'LOCK TABLE attempts IN SHARE ROW EXCLUSIVE MODE');
}

/** Waits until the latest run of a workflow has closed, and says how. */
export async function untilWorkflowClosed(
  stack: TestStack,
  workflowId: string,
  timeoutMs = 20_000,
) {
  const described = await eventually(
    () => stack.temporal.workflow.getHandle(workflowId).describe(),
    (d) => d.status.name !== 'RUNNING',
    timeoutMs,
  );
  return described.status.name;
}

/**
 * Every run Temporal keeps under a workflow id, read once the latest run has closed and the
 * visibility store (eventually consistent) shows it closed: a run started before it cannot be
 * missing from the list by lag.
 */
export async function runsOfWorkflow(stack: TestStack, workflowId: string): Promise<string[]> {
  await untilWorkflowClosed(stack, workflowId);
  const { runId } = await stack.temporal.workflow.getHandle(workflowId).describe();
  const listed = await eventually(
    async () => {
      const runs: Array<{ runId: string; closed: boolean }> = [];
      for await (const run of stack.temporal.workflow.list({
        query: `WorkflowId = "${workflowId}"`,
      })) {
        runs.push({ runId: run.runId, closed: run.status.name !== 'RUNNING' });
      }
      return runs;
    },
    (runs) => runs.some((run) => run.runId === runId && run.closed),
  );
  return listed.map((run) => run.runId);
}

/**
 * The stack of one test file: started before its tests (with the named providers certified for
 * their job types), stopped after the last (faults left over are cleared after each test for
 * every stack, see clearUnusedFaults). Use it as a
 * TestStack; it stands for the stack once the tests run.
 */
export function useTestStack(
  options: TestStackOptions & { certify?: Array<[provider: string, jobType: string]> } = {},
): TestStack {
  let current: TestStack | undefined;
  beforeAll(async () => {
    current = await startTestStack(options);
    for (const [provider, jobType] of options.certify ?? []) {
      const report = await current.certify(provider, jobType);
      if (!report.passed) throw new Error(`${provider} failed certification for ${jobType}`);
    }
  });
  afterAll(async () => {
    await current?.stop();
  });
  return new Proxy({} as TestStack, {
    get(_target, property) {
      if (!current) throw new Error('the test stack is not started yet (use it inside tests)');
      return Reflect.get(current, property);
    },
  });
}
