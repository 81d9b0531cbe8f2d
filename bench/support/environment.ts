import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { findJobType } from '../../src/jobTypes';
import type { ProviderConfig } from '../../src/providers/provider';
import { simulatorProviders } from '../../src/providers/registry';
import { uniqueName } from '../../test/support/database';
import { publishHarness, type HarnessInfo } from '../../test/support/harness';
import { TEST_TOKEN } from '../../test/support/identities';
import type { ServiceNodeFlags } from '../../test/support/serviceProcesses';
import { startTestStack, type TestStack } from '../../test/support/stack';
import { resolveDatabase } from '../../tools/stack/postgres';
import { freePort, spawnNodeScript, type GuardedProcess } from '../../tools/stack/processes';
import { obtainTemporalCli } from '../../tools/stack/temporalCli';
import { startTemporalDevServerOnFreePorts } from '../../tools/stack/temporalServer';
import { createBaselineTables } from '../baseline/schema';
import { CpuMeter, processesNamed, withDescendants } from './cpu';

export const BENCH_ROOT = path.resolve(__dirname, '..');
export const BENCH_OUTPUT = path.join(BENCH_ROOT, 'output');

/** The token both our API and the baseline accept for the benchmark's owner. */
export const BENCH_TOKEN = TEST_TOKEN;

/**
 * Providers of the benchmark's stack: the simulator's usual three, two heavy-tailed chat models
 * for the hedging row, and a payment provider with a 1 s attempt timeout whose charges the
 * blocked row holds unanswered (while the charge may still happen, its attempt stays `unknown`;
 * a chat model's timed-out attempt is settled `failed` once its call has ended).
 */
export function benchProviders(simulatorUrl: string): ProviderConfig[] {
  const baseUrl = `${simulatorUrl.replace(/\/$/, '')}/v1`;
  const chat = (
    name: string,
    model: string,
    timeoutMs: number,
    price = { currency: 'USD', inputPerMillion: 0.15, outputPerMillion: 0.6 },
  ): ProviderConfig => ({
    name,
    kind: 'openai-compatible',
    baseUrl,
    model,
    timeoutMs,
    sideEffects: false,
    // Priced, so that the hedging row can say what hedges cost, not only how many there were.
    price,
  });
  return [
    ...simulatorProviders(simulatorUrl),
    chat('tail-a', 'sim-heavytail', 30_000),
    chat('tail-b', 'sim-heavytail', 30_000),
    // The bad-day row: the product's default retries and circuit breaker (`{}`: every default).
    { ...chat('day-primary', 'sim-steady', 30_000), retry: {}, breaker: {} },
    { ...chat('day-backup', 'sim-backup', 30_000), retry: {}, breaker: {} },
    // The bad-day row's storm under a price ceiling: a backup 16.7× the primary's price.
    {
      ...chat('day-dear-backup', 'sim-backup', 30_000, {
        currency: 'USD',
        inputPerMillion: 2.5,
        outputPerMillion: 10,
      }),
      retry: {},
      breaker: {},
    },
    {
      name: 'pay-never-answers',
      kind: 'http',
      url: `${baseUrl}/charges`,
      statusUrl: `${baseUrl}/charges/by-key/{key}`,
      timeoutMs: 1_000,
      lateResultTimeoutMs: 86_400_000,
      sideEffects: true,
    },
  ];
}

/**
 * Our stack as the benchmark runs it: API and worker processes on the run's servers, the bench
 * providers, every provider a summarize job's default plan names certified (so that no job skips
 * one: a skipped provider costs its job a note and a warning, as in a misconfigured deployment).
 * `env` adds to (or overrides) the services' settings.
 */
export async function startBenchStack(options: {
  nodeFlags?: ServiceNodeFlags;
  temporalAddress?: string;
  env?: NodeJS.ProcessEnv;
}): Promise<TestStack> {
  const stack = await startTestStack({
    workerProcess: true,
    ...(options.nodeFlags ? { nodeFlags: options.nodeFlags } : {}),
    providers: benchProviders,
    hedgeDelayMs: BENCH_HEDGE_DELAY_MS,
    ...(options.temporalAddress ? { temporalAddress: options.temporalAddress } : {}),
    env: {
      LOG_LEVEL: 'warn',
      ONEJOB_MAX_WAITS_PER_OWNER: '1000',
      // A held call keeps its slot for its whole late-result window: 1,000 blocked jobs need
      // 1,000 slots (the default, 500, leaves the other 500 waiting to start their calls).
      ONEJOB_MAX_CONCURRENT_PROVIDER_CALLS: '1500',
      // The bench measures the engine path against the bare engine; owner limits are a
      // deployment's choice (their cost: a lookup and a short transaction per create).
      ONEJOB_OWNER_CREATES_PER_SECOND: 'off',
      ONEJOB_OWNER_MAX_OPEN_JOBS: 'off',
      ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND: 'off',
      ...options.env,
    },
  });
  const summarizeKinds: readonly string[] = findJobType('summarize')!.providerKinds;
  for (const { name, kind } of benchProviders(stack.simulator.url))
    if (summarizeKinds.includes(kind)) await stack.certify(name, 'summarize');
  return stack;
}

/** When a hedged job starts its second attempt: about the heavy-tailed model's 98th percentile. */
export const BENCH_HEDGE_DELAY_MS = 250;

export interface Baseline {
  url: string;
  taskQueue: string;
  pids: { server: number; worker: number };
  stop(): Promise<void>;
}

export interface BenchEnvironment {
  /** Where the servers came from, for the report. */
  temporal: string;
  postgres: string;
  stack: TestStack;
  /** The worker's Temporal SDK metrics (its workflow cache, its task slots). */
  workerMetricsUrl: string;
  baseline: Baseline;
  /** CPU time by part of the machine: where a job's time goes. */
  cpu: CpuMeter;
  stop(): Promise<void>;
}

function spawnTypeScript(file: string, env: NodeJS.ProcessEnv): GuardedProcess {
  // `--import tsx` lets the baseline run from its TypeScript source, as the benchmark does.
  return spawnNodeScript('--import', ['tsx', file], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env,
  });
}

async function readyMessage(child: GuardedProcess, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    child.child.on('message', (message: { ready?: boolean }) => message.ready && resolve());
    void child.exited.then((code) => reject(new Error(`${what} exited (code ${code})`)));
  });
}

async function startBaseline(stack: TestStack, temporalAddress: string): Promise<Baseline> {
  await createBaselineTables(stack.pool);
  const port = await freePort();
  const taskQueue = uniqueName('onejob-baseline');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    BASELINE_TASK_QUEUE: taskQueue,
    BASELINE_TOKEN: BENCH_TOKEN,
    BASELINE_PORT: String(port),
    BASELINE_SIMULATOR_URL: stack.simulator.url,
  };
  const worker = spawnTypeScript(path.join(BENCH_ROOT, 'baseline', 'worker.ts'), env);
  await readyMessage(worker, 'the baseline worker');
  const server = spawnTypeScript(path.join(BENCH_ROOT, 'baseline', 'server.ts'), env);
  await readyMessage(server, 'the baseline server');
  return {
    url: `http://127.0.0.1:${port}`,
    taskQueue,
    pids: { server: server.child.pid!, worker: worker.child.pid! },
    async stop() {
      await server.stop();
      await worker.stop();
    },
  };
}

/**
 * The servers the benchmark runs on: TEMPORAL_ADDRESS and DATABASE_URL (an admin URL: the
 * benchmark makes a database of its own there) when set, so the same suite measures a
 * production cluster; else a Temporal dev server and the local (or embedded) PostgreSQL, as
 * the tests use. On them: our API and worker as their own processes, the provider simulator,
 * and the baseline's server and worker, all on the same servers.
 */
export async function startBenchEnvironment(
  log: (line: string) => void,
  options: { nodeFlags?: ServiceNodeFlags } = {},
): Promise<BenchEnvironment> {
  mkdirSync(BENCH_OUTPUT, { recursive: true });
  const database = await resolveDatabase({ stateDir: path.join(BENCH_OUTPUT, 'state'), log });
  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  let stopTemporal = async (): Promise<void> => undefined;
  let temporalPid: number | undefined;
  let temporal = `TEMPORAL_ADDRESS ${temporalAddress}`;
  if (!temporalAddress) {
    const cli = await obtainTemporalCli(log);
    const server = await startTemporalDevServerOnFreePorts({
      cliPath: cli.path,
      logFile: path.join(BENCH_OUTPUT, 'temporal-server.log'),
      withUi: false,
    });
    temporalAddress = server.address;
    temporalPid = server.process.child.pid;
    stopTemporal = () => server.stop();
    temporal = 'Temporal dev server (in memory)';
  }
  // The test stack reads its servers from the harness description; only these fields matter to it.
  publishHarness({
    temporalEngine: 'dev',
    temporalAddress,
    adminDatabaseUrl: database.adminUrl,
  } as HarnessInfo);
  const workerMetricsAddress = `127.0.0.1:${await freePort()}`;
  const stack = await startBenchStack({
    nodeFlags: options.nodeFlags,
    temporalAddress,
    env: { ONEJOB_WORKER_METRICS_ADDRESS: workerMetricsAddress },
  });
  const baseline = await startBaseline(stack, temporalAddress);
  const cpu = new CpuMeter({
    'Temporal server': () => (temporalPid === undefined ? [] : withDescendants(temporalPid)),
    // Only a PostgreSQL on this machine shows up here (one process per connection).
    PostgreSQL: () => processesNamed('postgres'),
    'our API': () => [stack.api.child.pid!],
    'our worker': () => [stack.workerPid()!],
    'baseline server': () => [baseline.pids.server],
    'baseline worker': () => [baseline.pids.worker],
    'load generator and simulator': () => [process.pid],
  });
  return {
    cpu,
    temporal,
    postgres: `PostgreSQL (${database.source})`,
    stack,
    workerMetricsUrl: `http://${workerMetricsAddress}/metrics`,
    baseline,
    async stop() {
      await baseline.stop();
      await stack.stop();
      await stopTemporal();
      await database.stop();
    },
  };
}
