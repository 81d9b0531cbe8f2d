import { Client, Connection } from '@temporalio/client';
import path from 'node:path';
import {
  certificationFailure,
  certifyProvider,
  type CertificationReport,
} from '../../src/certification/certify';
import type { Pool } from '../../src/db/pool';
import { createLogger } from '../../src/logger';
import type { ProviderConfig } from '../../src/providers/provider';
import {
  ProviderRegistry,
  providerConfigsFromEnv,
  simulatorProviders,
} from '../../src/providers/registry';
import { temporalConnectionSettings, temporalConnectOptions } from '../../src/temporal/connection';
import { startSimulator, type SimulatorServer } from '../../tools/simulator/server';
import { freePort, startupProgress, type GuardedProcess } from '../../tools/stack/processes';
import { createTestDatabase, uniqueName } from './database';
import { harness } from './harness';
import {
  CALLBACK_SECRET,
  LONGEST_OWNER,
  LONGEST_OWNER_TOKEN,
  SPARE_OWNER,
  SPARE_TOKEN,
  OPERATOR,
  OPERATOR_TOKEN,
  OTHER_OWNER,
  OTHER_TOKEN,
  TEST_OWNER,
  TEST_SECRET_KEYS,
  TEST_TOKEN,
  TRICK_OWNERS,
} from './identities';
import { serviceProcesses, waitForHealthy, type ServiceNodeFlags } from './serviceProcesses';
import { quietTemporalRuntime, startInProcessWorker } from './worker';

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
  /** The API as its own process (dist/src/bin/api.js), as it runs in production. */
  api: GuardedProcess;
  apiOutput(): string;
  /** Every JSON log line the stack's worker and API wrote, parsed: what an operator would read. */
  serviceLogs(): Array<Record<string, unknown>>;
  /** Provider adapters configured as the services have them (pointed at this stack's simulator). */
  registry: ProviderRegistry;
  /** A worker in this process on another task queue, with this stack's database and providers. */
  startWorkerOn(taskQueue: string): Promise<void>;
  /** Another API process (a second replica) on the same database, Temporal and task queue. */
  startExtraApi(
    env?: NodeJS.ProcessEnv,
  ): Promise<{ url: string; port: number; stop(): Promise<void> }>;
  /**
   * Runs the golden cases of a job type through a provider and stores the verdict. Each case
   * must answer within the provider's attempt timeout, or within `deadlineMs` when given.
   */
  certify(
    provider: string,
    jobType: string,
    options?: { deadlineMs?: number },
  ): Promise<CertificationReport>;
  /** With workerProcess: SIGKILL (or another signal to) the worker, mid-attempt say … */
  killWorker(signal?: NodeJS.Signals): Promise<number | null>;
  /** … and start a fresh one. */
  restartWorker(): Promise<void>;
  /** With workerProcess: the worker process's pid (its memory, for the benchmark). */
  workerPid(): number | undefined;
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
  /** Run the worker as its own process (dist/src/bin/worker.js), e.g. to kill it. */
  workerProcess?: boolean;
  /** Provider configs, given the simulator's URL; default: the simulator's standard providers. */
  providers?: (simulatorUrl: string) => ProviderConfig[];
  /** Hedge delay while no p95 is known. */
  hedgeDelayMs?: number;
  /** More settings for the API and the worker, as environment variables (ONEJOB_…). */
  env?: NodeJS.ProcessEnv;
  /** The API process's own DATABASE_URL, given the stack's (e.g. through a TCP proxy). */
  apiDatabaseUrl?: (databaseUrl: string) => string;
  /** A Temporal namespace other than `default` (it must exist). */
  namespace?: string;
  /** A Temporal server of the test's own instead of the run's shared one. */
  temporalAddress?: string;
  /**
   * The compiled product to run instead of this checkout's dist/src: a folder like it (such as
   * a copy with a planted bug, see tools/chaos/plantedBugs.ts) in a copy of the package, whose
   * `migrations` folder (two levels up, beside its dist) is applied to the stack's database. Needs `workerProcess`: an in-process worker would run this
   * checkout's code.
   */
  build?: string;
  /** Node's flags for the API process and the worker's (with workerProcess), e.g. `--cpu-prof`. */
  nodeFlags?: ServiceNodeFlags;
  /** How long the start may take before it gives up; default STACK_START_DEADLINE_MS. */
  startDeadlineMs?: number;
}

/**
 * How long a stack may take to start: less than Jest's hook timeout (testTimeout, 120 s in
 * jest.config.js), so that a start that cannot finish gives up by itself, says where it stood
 * and stops what it started, before Jest gives up on the hook and goes on without it.
 */
export const STACK_START_DEADLINE_MS = 100_000;

/**
 * A start in progress. What it has started is stopped again (newest first) if it fails or gives
 * up; a step it gave up waiting for that finishes later is stopped as it finishes.
 */
class Starting {
  private readonly started: Array<() => Promise<unknown>> = [];
  private undone = false;
  /** Where the start stands, for the error of a start that gives up. */
  at: () => string = () => 'its database';

  constructor(private readonly signal: AbortSignal) {}

  /** How to stop something started; run at once if the start has already been undone. */
  owns(stop: () => Promise<unknown>): void {
    if (this.undone) void stop().catch(() => undefined);
    else this.started.push(stop);
  }

  /** Waits for `work` unless the start gives up first; what it yields is owned through `stop`. */
  step<T>(at: string | (() => string), work: Promise<T>, stop?: (value: T) => Promise<unknown>) {
    this.at = typeof at === 'string' ? () => at : at;
    // Registered before the caller's continuation runs: nothing it yields goes unowned.
    if (stop)
      work.then(
        (value) => this.owns(() => stop(value)),
        () => undefined,
      );
    return new Promise<T>((resolve, reject) => {
      const giveUp = (): void => reject(this.signal.reason);
      if (this.signal.aborted) return giveUp();
      this.signal.addEventListener('abort', giveUp, { once: true });
      work.then(resolve, reject).finally(() => this.signal.removeEventListener('abort', giveUp));
    });
  }

  async undo(): Promise<void> {
    this.undone = true;
    for (const stop of this.started.reverse()) await stop().catch(() => undefined);
  }
}

/** This file's stack starts that have not finished, and how to give each up. */
const unfinishedStarts = new Map<AbortController, Promise<unknown>>();

/**
 * Gives up every stack start of this file that has not finished, and waits until each has
 * stopped what it had started. Run after a file's tests (test/support/setupEachFile.ts): a start
 * still going then is one whose hook or test Jest gave up on (its timeout), and what it went on
 * to start nobody would stop. A worker left polling keeps Jest, and CI, waiting.
 */
export async function abandonUnfinishedStarts(): Promise<void> {
  const unfinished = [...unfinishedStarts];
  for (const [abort] of unfinished)
    abort.abort(new Error('the test stack start was given up: its hook or test had timed out'));
  await Promise.allSettled(unfinished.map(([, settled]) => settled));
}

/** The simulators of the stacks this test file has running (see clearUnusedFaults). */
const liveSimulators = new Set<SimulatorServer>();

/**
 * Drops every fault a test queued and did not use up, on every stack of the file, so that a
 * one-shot fault never meets the next test's request. Registered for every file by
 * test/support/setupEachFile.ts.
 */
export function clearUnusedFaults(): void {
  for (const simulator of liveSimulators) simulator.clearFaults();
}

/**
 * Starts a stack, within `startDeadlineMs`. A start that fails or gives up stops what it had
 * started before it rejects: a stack that never came up must not leave a worker polling or an API
 * running, which would keep Jest (and CI) waiting to the end of its time instead of failing.
 */
export function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const abort = new AbortController();
  const starting = new Starting(abort.signal);
  const deadlineMs = options.startDeadlineMs ?? STACK_START_DEADLINE_MS;
  const deadline = setTimeout(
    () =>
      abort.abort(
        new Error(`the test stack did not start within ${deadlineMs} ms (at ${starting.at()})`),
      ),
    deadlineMs,
  );
  const started = startStack(options, starting).finally(() => {
    clearTimeout(deadline);
    unfinishedStarts.delete(abort);
  });
  unfinishedStarts.set(
    abort,
    started.catch(() => undefined),
  );
  return started;
}

async function startStack(options: TestStackOptions, starting: Starting): Promise<TestStack> {
  quietTemporalRuntime();
  const info = harness();
  if (options.build !== undefined && !options.workerProcess)
    throw new Error('a stack that runs another build needs workerProcess: true');
  try {
    const database = await starting.step(
      'its database',
      createTestDatabase(
        options.build === undefined
          ? undefined
          : path.join(options.build, '..', '..', 'migrations'),
      ),
      (made) => made.drop(),
    );
    const taskQueue = uniqueName('onejob-test');
    const simulator = await starting.step('the provider simulator', startSimulator(), (started) =>
      started.close(),
    );
    // The in-process worker logs into memory, so tests can read what an operator would see.
    const workerLogLines: string[] = [];
    const logger = createLogger('onejob-test', 'info', {
      write: (line: string) => void workerLogLines.push(line),
    });
    const port = await freePort();
    const serviceEnv: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: options.temporalAddress ?? info.temporalAddress,
      TEMPORAL_NAMESPACE: options.namespace ?? 'default',
      ONEJOB_TASK_QUEUE: taskQueue,
      ONEJOB_SIMULATOR_URL: simulator.url,
      // The simulator's standard providers by default; either way without retries on the same
      // provider or a breaker unless the test's configs turn them on (see support/providers.ts).
      ONEJOB_PROVIDERS: JSON.stringify(
        (options.providers ?? simulatorProviders)(simulator.url).map((config) => ({
          retry: false,
          breaker: false,
          ...config,
        })),
      ),
      ONEJOB_OPERATOR_TOKENS: `${OPERATOR}:${OPERATOR_TOKEN}`,
      ONEJOB_SIMULATOR_CALLBACK_SECRET: CALLBACK_SECRET,
      ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS,
      ONEJOB_HEDGE_DELAY_MS: String(options.hedgeDelayMs ?? 2_000),
      ONEJOB_API_TOKENS: [
        `${TEST_OWNER}:${TEST_TOKEN}`,
        `${OTHER_OWNER}:${OTHER_TOKEN}`,
        `${LONGEST_OWNER}:${LONGEST_OWNER_TOKEN}`,
        `${SPARE_OWNER}:${SPARE_TOKEN}`,
        ...Object.entries(TRICK_OWNERS).map(([owner, token]) => `${owner}:${token}`),
      ].join(','),
      HOST: '127.0.0.1',
      PORT: String(port),
      ONEJOB_WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
      ONEJOB_WORKER_HEALTH_ADDRESS: `127.0.0.1:${await freePort()}`,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      // The tests' webhook receivers listen on loopback over http, which deployments refuse by
      // default.
      ONEJOB_WEBHOOK_INTERNAL_TARGETS: 'allow',
      ONEJOB_WEBHOOK_PLAIN_HTTP: 'allow',
      // Limits are on in every deployment; these are sized for a test's traffic, not a tenant's.
      ONEJOB_OWNER_CREATES_PER_SECOND: '1000',
      ONEJOB_OWNER_CREATE_BURST: '10000',
      ONEJOB_OWNER_MAX_OPEN_JOBS: '100000',
      ONEJOB_OWNER_WEBHOOK_REQUESTS_PER_SECOND: '1000',
      ONEJOB_OWNER_WEBHOOK_REQUEST_BURST: '10000',
      ...options.env,
    };

    const services = serviceProcesses(serviceEnv, options.build, options.nodeFlags);

    // Connected as the services connect (TLS settings included, when the test sets them).
    const connection = await starting.step(
      'connecting to Temporal',
      Connection.connect(temporalConnectOptions(temporalConnectionSettings(serviceEnv))),
      (connected) => connected.close(),
    );
    const temporal = new Client({ connection, namespace: options.namespace ?? 'default' });
    const registry = new ProviderRegistry(providerConfigsFromEnv(serviceEnv), serviceEnv);

    let workerProcess: GuardedProcess | undefined;
    const workerDeps = {
      temporal,
      pool: database.pool,
      providers: registry,
      logger,
      serviceEnv,
    };
    const extraWorkers: Array<{ stop(): Promise<void> }> = [];
    // The API's process loads while the worker starts: the two starts share the wait.
    const api = services.spawn(
      'api',
      options.apiDatabaseUrl ? { DATABASE_URL: options.apiDatabaseUrl(database.url) } : {},
    );
    starting.owns(() => api.stop());
    const apiProgress = startupProgress(api);
    let stopWorker: () => Promise<void>;
    if (options.workerProcess) {
      let progress = (): string => 'not spawned yet';
      workerProcess = await starting.step(
        () => `the worker process (${progress()})`,
        services.startWorker((spawned) => {
          progress = startupProgress(spawned);
          starting.owns(() => spawned.stop());
        }),
      );
      stopWorker = async () => workerProcess?.stop();
    } else {
      const worker = await starting.step(
        'the worker',
        startInProcessWorker(workerDeps, taskQueue),
        (started) => started.stop(),
      );
      stopWorker = () => worker.stop();
    }

    const extraApis: GuardedProcess[] = [];
    const apiUrl = `http://127.0.0.1:${port}`;
    await starting.step(
      () => `the API process (${apiProgress()})`,
      waitForHealthy(`${apiUrl}/healthz`, api, services.output, apiProgress),
    );
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
      apiOutput: services.output,
      serviceLogs: () =>
        [...workerLogLines, ...services.output().split('\n')].flatMap((line) => {
          if (!line.startsWith('{')) return [];
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
      registry,
      async startWorkerOn(queue) {
        extraWorkers.push(await startInProcessWorker(workerDeps, queue));
      },
      async startExtraApi(env = {}) {
        const extraPort = await freePort();
        const extra = services.spawn('api', { ...env, PORT: String(extraPort) });
        const url = `http://127.0.0.1:${extraPort}`;
        await waitForHealthy(`${url}/healthz`, extra, services.output);
        extraApis.push(extra);
        return { url, port: extraPort, stop: () => extra.stop() };
      },
      certify(provider, jobType, { deadlineMs } = {}) {
        const configured = registry.get(provider);
        // The same adapter with another attempt timeout: certification's deadline is the only use.
        const adapter =
          deadlineMs === undefined
            ? configured
            : new ProviderRegistry(
                [{ ...configured.config, timeoutMs: deadlineMs }],
                serviceEnv,
              ).get(provider);
        return certifyProvider({ db: database.pool, provider: adapter, jobType });
      },
      async killWorker(signal = 'SIGKILL') {
        if (!workerProcess)
          throw new Error(
            'the worker runs in this process; start the stack with workerProcess: true',
          );
        workerProcess.child.kill(signal);
        return workerProcess.exited;
      },
      async restartWorker() {
        workerProcess = await services.startWorker();
      },
      workerPid: () => workerProcess?.child.pid,
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
  } catch (error) {
    await starting.undo();
    throw error;
  }
}

/**
 * A certification a test needs before it starts, not one it examines: each case may take up to
 * 30 s, whatever the provider's attempt timeout (the model-based stack's providers that time out
 * have 1 s, and a loaded CI machine once took longer than that to answer a golden case). What a
 * certification's deadline decides is pinned in test/certification.test.ts. A failure says why.
 */
export async function certifyForSetup(
  stack: TestStack,
  certifications: ReadonlyArray<readonly [provider: string, jobType: string]>,
): Promise<void> {
  for (const [provider, jobType] of certifications) {
    const report = await stack.certify(provider, jobType, { deadlineMs: 30_000 });
    if (!report.passed)
      throw new Error(
        `${provider} failed certification for ${jobType}: ${certificationFailure(report)}`,
      );
  }
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
    await certifyForSetup(current, options.certify ?? []);
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
