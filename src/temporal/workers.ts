import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import {
  createJobActivities,
  createProviderCallActivities,
  createWebhookSendingActivities,
  type ActivityDeps,
} from '../activities';
import { attemptLooks } from '../activities/attempts';
import { withDefaults, type workerConfig } from '../config';
import { DEFAULTS } from '../domain/defaults';
import type { Settings } from '../domain/settings';
import { recheckDueAttempts } from '../service/rechecks';
import { startMissingSenders } from '../service/webhookSenders';
import { tracingWorkerOptions, WORKFLOW_TRACING_MODULE } from '../telemetry/temporalTracing';
import type { Tracing } from '../telemetry/tracing';
import { providerCallTaskQueue, webhookTaskQueue } from '../workflows/taskQueues';

/**
 * Besides the activities' settings: provider calls at once in this process (they wait on the
 * network, not the CPU); workflow runs kept in memory between their tasks; how long running
 * provider calls may go on after a shutdown request (they end with the process, their attempts
 * reconciled later); how long a run's next task waits on this worker's sticky queue.
 */
export interface JobWorkerOptions
  extends
    ActivityDeps,
    Pick<
      Settings,
      | 'maxConcurrentProviderCalls'
      | 'maxCachedWorkflows'
      | 'shutdownForceTimeMs'
      | 'stickyQueueTimeoutMs'
    > {
  connection: NativeConnection;
  namespace: string;
  /** A prebuilt workflow bundle; without it the workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
  /** The process's tracing, when it traces: jobs' traces then go through this worker. */
  tracing?: Tracing;
}

/** The worker's settings, as `workerConfig()` reads them from the environment. */
export function workerSettings(config: ReturnType<typeof workerConfig>) {
  return {
    ...withDefaults(config),
    requireCertifiedPrimary: config.requireCertifiedPrimary,
    allowInternalWebhookTargets: config.allowInternalWebhookTargets,
    allowedWebhookTargets: config.allowedWebhookTargets,
    allowPlainHttpWebhooks: config.allowPlainHttpWebhooks,
    secretKeys: config.secretKeys,
    ...(config.hedgeBudget ? { hedgeBudget: config.hedgeBudget } : {}),
    rejectionRule: config.rejectionRule,
    decertifiedRecheckMs: config.decertifiedRecheckMs,
    admissionHoldRecheckMs: config.admissionHoldRecheckMs,
  } satisfies Partial<JobWorkerOptions>;
}

/** The three workers of a onejob worker process, run and stopped together. */
export interface JobWorkers {
  run(): Promise<void>;
  shutdown(): void;
  /** Why the workers are not taking tasks (not running, a poller stopped), or none when they are. */
  notPolling(): string[];
}

/**
 * The job workflow and its bookkeeping activities on the job task queue, and the provider
 * calls on a task queue of their own with their own slots: calls that hang (up to their
 * late-result window) can never keep jobs from being admitted or attempts from settling. Webhook
 * sends have a third queue and slots, for the same reason towards provider calls.
 */
export async function createJobWorkers(options: JobWorkerOptions): Promise<JobWorkers> {
  const deps: ActivityDeps = options;
  const shutdownForceTime = options.shutdownForceTimeMs;
  const tracing = tracingWorkerOptions(options.tracing);
  const jobs = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle, interceptors: tracing.interceptors }
      : {
          workflowsPath: require.resolve('../workflows'),
          interceptors: { ...tracing.interceptors, workflowModules: [WORKFLOW_TRACING_MODULE] },
        }),
    sinks: tracing.sinks,
    activities: createJobActivities(deps),
    maxCachedWorkflows: options.maxCachedWorkflows,
    stickyQueueScheduleToStartTimeout: options.stickyQueueTimeoutMs,
    shutdownForceTime,
  });
  const sending = createWebhookSendingActivities(deps);
  const calls = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: providerCallTaskQueue(options.taskQueue),
    interceptors: tracing.interceptors,
    activities: createProviderCallActivities(deps, sending),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentProviderCalls,
    shutdownForceTime,
  });
  // Webhook rounds with slots of their own: a receiver that never answers cannot take a
  // provider call's slot, and one owner's rounds wait for the owner's send slots, not others'.
  const webhooks = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: webhookTaskQueue(options.taskQueue),
    interceptors: tracing.interceptors,
    activities: sending,
    maxConcurrentActivityTaskExecutions: options.webhookSends.perProcess,
    shutdownForceTime,
  });
  const reconciler = startReconciler(deps, options.taskQueue);
  const shutdown = (): void => {
    reconciler.stop();
    for (const worker of [jobs, calls, webhooks]) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  };
  return {
    async run() {
      // When one stops (or fails), the other stops too: half a worker is no worker.
      const results = await Promise.allSettled(
        [jobs, calls, webhooks].map((worker) => worker.run().finally(shutdown)),
      );
      await reconciler.stopped();
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    shutdown,
    notPolling: () => [
      ...pollerTrouble(jobs, options.taskQueue, ['workflow', 'activity']),
      ...pollerTrouble(calls, providerCallTaskQueue(options.taskQueue), ['activity']),
      ...pollerTrouble(webhooks, webhookTaskQueue(options.taskQueue), ['activity']),
    ],
  };
}

/** What keeps `worker` from taking its kinds of task: its run state, then each poller's. */
function pollerTrouble(
  worker: Worker,
  taskQueue: string,
  kinds: ReadonlyArray<'workflow' | 'activity'>,
): string[] {
  const status = worker.getStatus();
  if (status.runState !== 'RUNNING') return [`${taskQueue}: ${status.runState.toLowerCase()}`];
  return kinds.flatMap((kind) => {
    const state = kind === 'workflow' ? status.workflowPollerState : status.activityPollerState;
    return state === 'POLLING' ? [] : [`${taskQueue}: ${kind} poller ${state.toLowerCase()}`];
  });
}

/**
 * The looks at the unknown attempts of open jobs, while their workflows sleep: a round every
 * DEFAULTS.recheckIntervalMs, one round at a time. Part of every worker, since a blocked job
 * moves on only when a look (or a late answer, a callback, an operator) settles its attempt.
 */
function startReconciler(
  deps: ActivityDeps,
  taskQueue: string,
): { stop(): void; stopped(): Promise<void> } {
  const { lookAgain } = attemptLooks(deps);
  let round: Promise<void> = Promise.resolve();
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    round = recheckDueAttempts(
      {
        pool: deps.pool,
        temporal: deps.temporal,
        taskQueue,
        retry: deps.webhookRetry,
        providers: deps.providers.names(),
        lookAgain,
        metrics: deps.metrics,
      },
      deps.logger,
    )
      .then((report) => {
        if (report.woken + report.needOperator + report.failed > 0)
          deps.logger.info(report, 'unknown attempts looked at');
      })
      .catch((error: unknown) => deps.logger.error({ err: error }, 'reconciler round failed'))
      .finally(() => (running = false));
  }, DEFAULTS.recheckIntervalMs);
  timer.unref();
  // Webhook deliveries left without a sender: never taken up (no workflow handed them over), and
  // at a slower pace, taken up once and then stranded (they have waited long already).
  const strandedAfterMs = deps.webhookStrandedAfterMs;
  const unsentAfterMs = DEFAULTS.unsentDeliveryAfterMs;
  const strandedEvery = Math.max(1, Math.round(strandedAfterMs / 10 / unsentAfterMs));
  let backstopRounds = 0;
  const backstop = setInterval(() => {
    backstopRounds += 1;
    void startMissingSenders(
      { ...deps, taskQueue, retry: deps.webhookRetry },
      {
        unsentAfterMs,
        ...(backstopRounds % strandedEvery === 0 ? { strandedAfterMs } : {}),
      },
    ).catch((error: unknown) =>
      deps.logger.error({ err: error }, 'could not look for webhook deliveries without a sender'),
    );
  }, unsentAfterMs);
  backstop.unref();
  return {
    stop: () => {
      clearInterval(timer);
      clearInterval(backstop);
    },
    stopped: () => round,
  };
}
