// First: tracing must be running before http and pg are loaded.
// eslint-disable-next-line import-x/order
import { workerTracing } from '../telemetry/workerTracing';
import { Client, Connection } from '@temporalio/client';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { attemptActivities } from '../activities/attempts';
import { sweeperConfig, workerConfig } from '../config';
import { schemaAtStart } from '../db/migrate';
import { createPool } from '../db/pool';
import { purgeDeadSecrets } from '../db/webhookSecrets';
import { DEFAULTS } from '../domain/defaults';
import { refusePublishedDevSecrets } from '../domain/publishedSecrets';
import { serveHealth } from '../health/healthServer';
import { metricsAccessFor } from '../health/metricsAccess';
import { checkReadiness, pollersProbe, postgresProbe, temporalProbe } from '../health/readiness';
import { createLogger } from '../logger';
import { ProviderRegistry, providerConfigsFromEnv } from '../providers/registry';
import { reconcileAttemptsOfEndedJobs, sweepJobs } from '../service/sweeper';
import { prepareWebhookSecrets } from '../service/webhookSecrets';
import { createWorkerMetrics } from '../telemetry/histograms';
import { tracingClientInterceptors } from '../telemetry/temporalTracing';
import { temporalConnectOptions } from '../temporal/connection';
import { temporalSdkLogger } from '../temporal/logging';
import { ensureSearchAttributes } from '../temporal/searchAttributes';
import { createJobWorkers, workerSettings } from '../temporal/workers';
import { prebuiltWorkflowBundle } from '../temporal/workflowBundle';
import { exitWithParent, tellParent } from './parentLink';

/** At most this many dead webhook secrets are deleted per sweep (the rest at the next one). */
const SECRETS_PURGED_PER_SWEEP = 1_000;

async function main(): Promise<void> {
  const logger = createLogger('onejob-worker');
  const config = workerConfig();
  const providerConfigs = providerConfigsFromEnv();
  refusePublishedDevSecrets(process.env, providerConfigs);
  const { metricsAddress, healthAddress } = config;
  Runtime.install({
    // The SDK's logs, and its core's (warnings and errors), in our log stream.
    logger: temporalSdkLogger(logger),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      // The SDK's own metrics (task latencies, slots, polls), for Prometheus to scrape.
      ...(metricsAddress === 'off'
        ? {}
        : { metrics: { prometheus: { bindAddress: metricsAddress } } }),
    },
  });
  // Until its workers exist there is nothing to drain, and the SDK's signal handler (installed
  // above) has no worker to stop: without this, a start held at a step (the migrations' lock,
  // say) would sit through SIGTERM until its supervisor killed it.
  const stopDuringStart = (): void => process.exit(143);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, stopDuringStart);
  const sweep = sweeperConfig();
  const providers = new ProviderRegistry(providerConfigs);
  const pool = createPool(config.databaseUrl);
  tellParent({ starting: 'migrations' });
  await schemaAtStart(pool, config.migrations);
  tellParent({ starting: 'webhook secrets' });
  const secrets = await prepareWebhookSecrets(pool, config.secretKeys);
  if (secrets.sealed > 0) logger.info(secrets, 'webhook secrets sealed at rest');
  tellParent({ starting: 'connecting to Temporal' });
  const connection = await NativeConnection.connect(temporalConnectOptions(config.temporal));
  try {
    const added = await ensureSearchAttributes(connection, config.temporal.namespace);
    if (added.length > 0) logger.info({ added }, 'registered search attributes');
  } catch (error) {
    logger.warn(
      { err: error },
      'could not check or register search attributes; register them on the server',
    );
  }
  const clientConnection = await Connection.connect(temporalConnectOptions(config.temporal));
  const temporal = new Client({
    connection: clientConnection,
    namespace: config.temporal.namespace,
    interceptors: tracingClientInterceptors(workerTracing),
  });
  const metrics = createWorkerMetrics();
  tellParent({ starting: 'workers (workflow bundle, pollers)' });
  const worker = await createJobWorkers({
    temporal,
    metrics,
    ...workerSettings(config),
    connection,
    namespace: config.temporal.namespace,
    pool,
    providers,
    logger,
    workflowBundle: prebuiltWorkflowBundle(),
    ...(workerTracing ? { tracing: workerTracing } : {}),
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, stopDuringStart);
  // SIGINT/SIGTERM already make the SDK shut the worker down; a vanished parent should too.
  exitWithParent(() => worker.shutdown());
  // Ready when PostgreSQL and Temporal answer and both workers' pollers take tasks.
  const probes = {
    postgres: postgresProbe(pool),
    temporal: temporalProbe(temporal, DEFAULTS.readinessTimeoutMs),
    pollers: pollersProbe(() => worker.notPolling()),
  };
  const health =
    healthAddress === 'off'
      ? undefined
      : await serveHealth({
          address: healthAddress,
          variable: 'ONEJOB_WORKER_HEALTH_ADDRESS',
          readiness: () => checkReadiness(probes, logger),
          metrics: { registry: metrics.registry, access: metricsAccessFor(config.metricsToken) },
        });
  const running = worker.run();
  logger.info(
    {
      taskQueue: config.taskQueue,
      providers: providers.names(),
      metrics: metricsAddress === 'off' ? 'off' : `http://${metricsAddress}/metrics`,
      health: health ? `${health.url}/readyz` : 'off',
      workerMetrics: health ? `${health.url}/metrics` : 'off',
    },
    'worker started',
  );

  // Heal jobs whose workflow start was lost (API crash between insert and start), and keep
  // reconciling the unknown attempts of ended jobs: at start, then now and then.
  const settling = attemptActivities({
    pool,
    providers,
    logger,
    reconcileFirstDelayMs: config.reconcileFirstDelayMs,
    reconcileMaxDelayMs: config.reconcileMaxDelayMs,
  });
  const sweepOnce = (): void => {
    sweepJobs(
      { pool, temporal, taskQueue: config.taskQueue },
      { olderThanMs: sweep.graceMs },
      logger,
    )
      .then(
        (report) =>
          report.started + report.restarted + report.needOperator + report.refused + report.failed >
            0 && logger.info(report, 'sweep done'),
      )
      .catch((error: unknown) => logger.error({ err: error }, 'sweep failed'));
    reconcileAttemptsOfEndedJobs({ pool, reconcile: settling.reconcileAttempt }, logger)
      .then((report) => report.looked > 0 && logger.info(report, 'ended jobs’ attempts looked at'))
      .catch((error: unknown) => logger.error({ err: error }, 'attempt sweep failed'));
    // Secrets nothing signs with any more (expired, or of a deleted endpoint) leave the table.
    purgeDeadSecrets(pool, SECRETS_PURGED_PER_SWEEP)
      .then((purged) => purged > 0 && logger.info({ purged }, 'dead webhook secrets purged'))
      .catch((error: unknown) => logger.error({ err: error }, 'webhook secret purge failed'));
  };
  sweepOnce();
  const sweeper = setInterval(sweepOnce, sweep.intervalMs);
  sweeper.unref();

  // Tell a supervising parent (npm start) that jobs will now be picked up.
  tellParent({ ready: true });
  await running;
  clearInterval(sweeper);
  await health?.close();
  await clientConnection.close();
  await connection.close();
  await pool.end();
  await workerTracing?.shutdown();
  logger.info('worker stopped');
}

main().catch((error: unknown) => {
  console.error(`onejob worker: ${(error as Error).message}`);
  process.exit(1);
});
