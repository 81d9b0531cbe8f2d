import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { BUILT_PRODUCT, builtProduct } from '../../tools/stack/build';
import {
  spawnNodeScript,
  startupProgress,
  waitForHttp,
  waitForReady,
  type GuardedProcess,
} from '../../tools/stack/processes';
import { TEST_SECRET_KEYS } from './identities';

/**
 * Waits until `url` answers OK while the process lives; otherwise stops it and fails with where its
 * start stood and what the processes wrote. Call it right after the spawn: it follows the process's start-up steps. A
 * minute, since a loaded machine once took over 30 s to bring an API up on the production engine.
 */
export async function waitForHealthy(
  url: string,
  proc: GuardedProcess,
  output: () => string,
  /** Where its start stands, followed from its spawn (by default, from now). */
  progress: () => string = startupProgress(proc),
): Promise<void> {
  try {
    await waitForHttp(url, 60_000, proc.exited, progress);
  } catch (error) {
    await proc.stop();
    throw new Error(
      `the API process did not become healthy: ${(error as Error).message}\n${output()}`,
    );
  }
}

/** Node's flags per service process, e.g. `--cpu-prof` for the API. */
export type ServiceNodeFlags = Partial<Record<'api' | 'worker', string[]>>;

/**
 * The stack's services as their own processes (dist/src/bin/api.js, dist/src/bin/worker.js), as they run
 * in production, all with one environment and all writing into one output. `build` is the
 * compiled product to run (a folder like dist/src); default: this checkout's. `nodeFlags` go to
 * each service's Node (the benchmark's `--cpu-prof`).
 */
export function serviceProcesses(
  serviceEnv: NodeJS.ProcessEnv,
  build = BUILT_PRODUCT,
  nodeFlags: ServiceNodeFlags = {},
) {
  let output = '';
  const spawnService = (name: 'api' | 'worker', env: NodeJS.ProcessEnv = {}): GuardedProcess => {
    const [first, ...rest] = [...(nodeFlags[name] ?? []), path.join(build, 'bin', `${name}.js`)];
    const child = spawnNodeScript(first!, rest, {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: { ...serviceEnv, ...env },
    });
    child.child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return child;
  };
  return {
    spawn: spawnService,
    /** Everything the processes wrote so far. */
    output: () => output,
    /**
     * A worker process, once it says it is ready. `spawned` hears of it at once, so that a start
     * that gives up meanwhile can stop it.
     */
    async startWorker(spawned?: (worker: GuardedProcess) => void): Promise<GuardedProcess> {
      const child = spawnService('worker');
      spawned?.(child);
      try {
        await waitForReady(child, 120_000);
      } catch (error) {
        await child.stop();
        throw new Error(`the worker process: ${(error as Error).message}\n${output}`);
      }
      return child;
    },
  };
}

/**
 * Starts dist/src/bin/<name>.js with only `env` (and PATH) and waits for it to exit: for settings a
 * service must refuse before it connects anywhere. The database and Temporal addresses given are
 * never reached by a refusal; a service that passes every check fails there instead. `meanwhile`
 * gets the process as it starts (to signal it); a process a signal ended exits with code null.
 */
export function startServiceUntilExit(
  name: 'api' | 'worker',
  env: NodeJS.ProcessEnv,
  meanwhile?: (child: ChildProcess) => void,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtProduct('bin', `${name}.js`)], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        ONEJOB_WORKER_METRICS_ADDRESS: 'off',
        // A key ring of the tests' own, so a refusal checked here is the setting's under test.
        ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    meanwhile?.(child);
  });
}
