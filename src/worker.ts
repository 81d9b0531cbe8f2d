import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from './activities';
import type { Pool } from './db/pool';
import type { Logger } from './logger';
import type { ProviderRegistry } from './providers/registry';

export interface JobWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  pool: Pool;
  providers: ProviderRegistry;
  logger: Logger;
  /** For activities that nudge a workflow (a late result arrived). */
  temporal: Client;
  defaultHedgeDelayMs?: number;
  requireCertifiedPrimary?: boolean;
  /** A prebuilt workflow bundle; without it the workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
}

/** A worker for the job workflow and its activities on one task queue. */
export async function createJobWorker(options: JobWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: require.resolve('./workflows') }),
    activities: createActivities({
      pool: options.pool,
      providers: options.providers,
      logger: options.logger,
      temporal: options.temporal,
      defaultHedgeDelayMs: options.defaultHedgeDelayMs,
      requireCertifiedPrimary: options.requireCertifiedPrimary,
    }),
  });
}
