import path from 'node:path';
import { spawnNodeScript, type GuardedProcess } from '../../src/dev/processes';
import { ROOT } from '../harness';

/** Waits until `url` answers OK while the process lives; fails with what the processes wrote. */
export async function waitForHealthy(
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

/**
 * The stack's services as their own processes (dist/bin/api.js, dist/bin/worker.js), as they run
 * in production, all with one environment and all writing into one output. `build` is the
 * compiled service to run (a dist-like folder); default: this checkout's dist.
 */
export function serviceProcesses(serviceEnv: NodeJS.ProcessEnv, build = path.join(ROOT, 'dist')) {
  let output = '';
  const spawnService = (name: 'api' | 'worker', env: NodeJS.ProcessEnv = {}): GuardedProcess => {
    const child = spawnNodeScript(path.join(build, 'bin', `${name}.js`), [], {
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
    /** A worker process, once it says it is ready. */
    async startWorker(): Promise<GuardedProcess> {
      const child = spawnService('worker');
      await new Promise<void>((resolve, reject) => {
        child.child.on('message', (message: { ready?: boolean }) => message.ready && resolve());
        void child.exited.then(() => reject(new Error(`the worker process exited:\n${output}`)));
      });
      return child;
    },
  };
}
