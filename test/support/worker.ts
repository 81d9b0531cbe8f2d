import type { Client } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { workerConfig } from '../../src/config';
import type { Pool } from '../../src/db/pool';
import type { Logger } from '../../src/logger';
import type { ProviderRegistry } from '../../src/providers/registry';
import { temporalConnectionSettings, temporalConnectOptions } from '../../src/temporal/connection';
import { createJobWorkers, workerSettings, type JobWorkers } from '../../src/temporal/workers';
import { harness } from './harness';

// Keep the SDK's own logging to warnings so test output stays readable.
let runtimeInstalled = false;
export function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed by an earlier file in the same process.
  }
}

/** What a worker in the test process runs with: a stack's database, providers and settings. */
export interface InProcessWorkerDeps {
  temporal: Client;
  pool: Pool;
  providers: ProviderRegistry;
  logger: Logger;
  /** The environment the stack's services get; the worker's settings are read from it. */
  serviceEnv: NodeJS.ProcessEnv;
}

/**
 * A worker in this process (workflows, bookkeeping and provider calls) on a task queue, running
 * unless `run: false` (then `run()` starts it).
 */
export async function startInProcessWorker(
  deps: InProcessWorkerDeps,
  queue: string,
  options: { run?: boolean } = {},
): Promise<{ workers: JobWorkers; run(): Promise<void>; stop(): Promise<void> }> {
  const info = harness();
  const nativeConnection = await NativeConnection.connect(
    temporalConnectOptions(temporalConnectionSettings(deps.serviceEnv)),
  );
  const worker = await createJobWorkers({
    temporal: deps.temporal,
    connection: nativeConnection,
    namespace: deps.temporal.options.namespace,
    pool: deps.pool,
    providers: deps.providers,
    logger: deps.logger,
    ...workerSettings(workerConfig(deps.serviceEnv)),
    taskQueue: queue,
    workflowBundle: { codePath: info.workflowBundlePath },
  });
  let workerRun: Promise<void> | undefined;
  const run = (): Promise<void> => (workerRun ??= worker.run());
  if (options.run !== false) void run();
  return {
    workers: worker,
    run,
    async stop() {
      worker.shutdown();
      await workerRun;
      await nativeConnection.close();
    },
  };
}
