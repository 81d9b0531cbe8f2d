import path from 'node:path';
import { certificationPlan, certifyMany } from '../../src/certification/certify';
import {
  databaseRecordFile,
  removeDatabaseRecord,
  withoutPassword,
  writeDatabaseRecord,
} from '../../src/cli/databaseRecord';
import { ensureStateFolder, stateFolder } from '../../src/cli/stateFolder';
import { migrate } from '../../src/db/migrate';
import { createPool } from '../../src/db/pool';
import {
  DEV_API_TOKENS,
  DEV_CALLBACK_SECRET,
  DEV_OPERATOR_TOKEN,
  DEV_OPERATOR_TOKENS,
  DEV_STACK_VARIABLE,
  DEV_TOKEN,
} from '../../src/domain/publishedSecrets';
import { ProviderRegistry, providerConfigsFromEnv } from '../../src/providers/registry';
import { otlpTracesEndpoint, tracingWanted } from '../../src/telemetry/tracing';
import { builtProduct, builtTool } from './build';
import { obtainJaeger, startJaeger, type Jaeger } from './jaeger';
import { checkPorts, devStackConfig, devStackPorts } from './portCheck';
import { ensureDatabase, resolveDatabase, type ResolvedDatabase } from './postgres';
import {
  spawnNodeScript,
  startupProgress,
  waitForHttp,
  waitForReady,
  type GuardedProcess,
} from './processes';
import { obtainTemporalCli } from './temporalCli';
import { startTemporalCluster } from './temporalCluster';
import { obtainTemporalClusterBinaries, TEMPORAL_SERVER_VERSION } from './temporalClusterBinaries';
import { clusterPortsFor } from './temporalClusterConfig';
import { temporalEngineKind } from './temporalEngine';
import { startTemporalDevServer, type DevServer } from './temporalServer';

/**
 * `npm start`: the whole system on embedded defaults, in one terminal. Temporal dev server
 * (Web UI included), PostgreSQL, migrations, the provider simulator, the worker and the API.
 * State survives restarts in the state folder; Ctrl-C stops every process it started.
 */
const log = (line: string): void => console.log(`[onejob] ${line}`);
/** The compiled programs npm start runs: the product's two services and the tools' simulator. */
const SCRIPTS = {
  simulator: builtTool('simulator', 'main.js'),
  worker: builtProduct('bin', 'worker.js'),
  api: builtProduct('bin', 'api.js'),
};

/** Waits for a child's `{ [key]: true }` IPC message. */
async function startDevEngine(
  stateDir: string,
  ports: ReturnType<typeof devStackConfig>,
): Promise<DevServer> {
  const cli = await obtainTemporalCli(log);
  log(`Temporal: starting the dev server (${cli.path}, from ${cli.source})`);
  return startTemporalDevServer({
    cliPath: cli.path,
    port: ports.temporalPort,
    uiPort: ports.temporalUiPort,
    dbFilename: path.join(stateDir, 'temporal.sqlite'),
    logFile: path.join(stateDir, 'temporal.log'),
  });
}

/** The production engine: the Temporal server on the same PostgreSQL, its own two databases. */
async function startClusterEngine(
  database: ResolvedDatabase,
  stateDir: string,
  ports: ReturnType<typeof devStackConfig>,
): Promise<DevServer> {
  const binaries = await obtainTemporalClusterBinaries(log, { withUi: true });
  const dir = path.join(stateDir, 'temporal-cluster');
  log(
    `Temporal: starting the Temporal server v${TEMPORAL_SERVER_VERSION} on PostgreSQL (${binaries.sources.join(', ')}; logs in ${dir})`,
  );
  if (!binaries.uiServer)
    log('Temporal Web UI: not available; use the temporal CLI (`temporal workflow list`)');
  return startTemporalCluster({
    binaries,
    adminDatabaseUrl: database.adminUrl,
    databaseName: `${ports.databaseName}_temporal`,
    dir,
    ports: await clusterPortsFor(dir, ports.temporalPort),
    uiPort: ports.temporalUiPort,
    log,
  });
}

async function main(): Promise<void> {
  const ports = devStackConfig();
  const stateDir = stateFolder();
  ensureStateFolder(stateDir);

  const children: GuardedProcess[] = [];
  let temporalServer: DevServer | undefined;
  let jaeger: Jaeger | undefined;
  let database: ResolvedDatabase | undefined;
  let stopping: Promise<void> | undefined;

  const stopAll = (exitCode: number): Promise<void> => {
    stopping ??= (async () => {
      log('stopping…');
      // Front to back: the API stops taking requests before the worker and servers go.
      for (const child of [...children].reverse()) await child.stop();
      await temporalServer?.stop();
      await jaeger?.stop();
      await database?.stop();
      removeDatabaseRecord(stateDir, process.pid);
      log('stopped');
      process.exit(exitCode);
    })();
    return stopping;
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // Before anything slow (PostgreSQL, a Temporal build): a busy port would only fail later.
    await checkPorts(devStackPorts(ports));

    // PostgreSQL first: the cluster engine keeps its own state there too.
    database = await resolveDatabase({ stateDir, log });
    env.DATABASE_URL =
      database.source === 'DATABASE_URL'
        ? database.adminUrl
        : await ensureDatabase(database.adminUrl, ports.databaseName);
    // Embedded PostgreSQL's port is new each start: the operator CLI reads it from here.
    if (database.source !== 'DATABASE_URL')
      writeDatabaseRecord(stateDir, {
        url: env.DATABASE_URL,
        source: database.source,
        pid: process.pid,
      });

    let temporalUi: string | undefined;
    const engine = temporalEngineKind();
    if (process.env.TEMPORAL_ADDRESS) {
      log(`Temporal: using ${process.env.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS); starting no server`);
    } else {
      temporalServer =
        engine === 'cluster'
          ? await startClusterEngine(database, stateDir, ports)
          : await startDevEngine(stateDir, ports);
      env.TEMPORAL_ADDRESS = temporalServer.address;
      temporalUi = temporalServer.uiUrl;
    }

    if (ports.traceUi) {
      const binary = await obtainJaeger(log);
      jaeger = await startJaeger({
        binary,
        dir: path.join(stateDir, 'jaeger'),
        ports: { ui: ports.traceUiPort, otlpHttp: ports.traceOtlpPort },
      });
      // The services trace, and send their spans there.
      env.OTEL_EXPORTER_OTLP_ENDPOINT = jaeger.otlpEndpoint;
      log(
        `Jaeger: traces at ${jaeger.uiUrl} (in memory; logs in ${path.join(stateDir, 'jaeger')})`,
      );
    }

    const pool = createPool(env.DATABASE_URL, { max: 1 });
    const applied = await migrate(pool);
    await pool.end();
    log(
      applied.length > 0
        ? `migrations applied: ${applied.join(', ')}`
        : 'database schema is up to date',
    );

    if (!env.ONEJOB_API_TOKENS) env.ONEJOB_API_TOKENS = DEV_API_TOKENS;
    if (!env.ONEJOB_OPERATOR_TOKENS) env.ONEJOB_OPERATOR_TOKENS = DEV_OPERATOR_TOKENS;
    // The simulator signs nothing by itself; this secret lets you try the callback route by hand.
    env.ONEJOB_SIMULATOR_CALLBACK_SECRET ??= DEV_CALLBACK_SECRET;
    // Only the processes started here may use the published secrets and the simulator by default.
    env[DEV_STACK_VARIABLE] = '1';
    if (!env.ONEJOB_SIMULATOR_URL && !env.ONEJOB_PROVIDERS)
      env.ONEJOB_SIMULATOR_URL = `http://127.0.0.1:${ports.simulatorPort}`;
    env.SIMULATOR_PORT = String(ports.simulatorPort);
    env.PORT = String(ports.apiPort);

    const start = (name: 'simulator' | 'worker' | 'api'): GuardedProcess => {
      // In a process group of its own: Ctrl-C (SIGINT to the terminal's whole group) reaches only
      // this supervisor, which stops each child in order. A child that got the SIGINT itself
      // could exit before this process had handled its own, and be taken for a crash (seen
      // under load: "simulator exited unexpectedly (code 0)"). If this process dies, each child
      // still stops, on its parent link.
      const child = spawnNodeScript(SCRIPTS[name], [], { env, detached: true });
      children.push(child);
      void child.exited.then((code) => {
        if (!stopping) {
          log(`${name} exited unexpectedly (code ${code}); stopping everything`);
          void stopAll(1);
        }
      });
      return child;
    };
    const simulator = start('simulator');
    await waitForHttp(`http://127.0.0.1:${ports.simulatorPort}/healthz`, 30_000, simulator.exited);
    if (!env.ONEJOB_PROVIDERS) {
      // The offline stack fails over out of the box: certify the simulator's well-behaved models.
      const certifying = createPool(env.DATABASE_URL, { max: 1 });
      try {
        const registry = new ProviderRegistry(providerConfigsFromEnv(env), env);
        const reports = await certifyMany({
          db: certifying,
          providers: certificationPlan(registry),
        });
        log(
          `certified: ${reports.map((r) => `${r.provider}/${r.jobType} ${r.passed ? 'ok' : 'FAILED'}`).join(', ')}`,
        );
      } finally {
        await certifying.end();
      }
    }
    const worker = start('worker');
    await waitForReady(worker, 120_000);
    const api = start('api');
    await waitForHttp(
      `http://127.0.0.1:${ports.apiPort}/healthz`,
      60_000,
      api.exited,
      startupProgress(api),
    );

    const devToken = process.env.ONEJOB_API_TOKENS ? undefined : DEV_TOKEN;
    console.log(
      [
        '',
        'onejob is running',
        `  API             http://127.0.0.1:${ports.apiPort}   (POST /v1/jobs, GET /v1/jobs/:id)`,
        ...(temporalUi ? [`  Temporal Web UI ${temporalUi}`] : []),
        `  Temporal gRPC   ${env.TEMPORAL_ADDRESS}${
          !temporalServer
            ? '   (TEMPORAL_ADDRESS)'
            : engine === 'cluster'
              ? `   (Temporal server v${TEMPORAL_SERVER_VERSION} on PostgreSQL)`
              : '   (dev server; ONEJOB_TEMPORAL_ENGINE=cluster runs the production engine)'
        }`,
        `  Simulator       http://127.0.0.1:${ports.simulatorPort}   (stand-in provider)`,
        jaeger
          ? `  Traces          ${jaeger.uiUrl}   (Jaeger; ONEJOB_TRACE_UI=off runs without)`
          : `  Traces          ${tracingWanted(env) ? `to ${otlpTracesEndpoint(env)}` : 'off'}`,
        `  Metrics         http://127.0.0.1:${ports.apiPort}/metrics (service), ${ports.workerMetricsAddress === 'off' ? 'off (ONEJOB_WORKER_METRICS_ADDRESS)' : `http://${ports.workerMetricsAddress}/metrics`} (Temporal SDK)`,
        `  Readiness       http://127.0.0.1:${ports.apiPort}/readyz (API), ${ports.workerHealthAddress === 'off' ? 'off (ONEJOB_WORKER_HEALTH_ADDRESS)' : `http://${ports.workerHealthAddress}/readyz`} (worker)`,
        `  PostgreSQL      ${withoutPassword(env.DATABASE_URL)}   (${
          database.source === 'DATABASE_URL'
            ? 'DATABASE_URL'
            : `${database.source}; the onejob CLI finds it in ${databaseRecordFile(stateDir)}`
        })`,
        devToken
          ? `  Dev API token   ${devToken}   (owner "dev"; set ONEJOB_API_TOKENS to choose your own)`
          : '  API tokens      from ONEJOB_API_TOKENS',
        process.env.ONEJOB_OPERATOR_TOKENS
          ? '  Operator tokens from ONEJOB_OPERATOR_TOKENS'
          : `  Dev operator    ${DEV_OPERATOR_TOKEN}   (operator "ops": /v1/operator/...; set ONEJOB_OPERATOR_TOKENS)`,
        '',
        'Try it:',
        `  curl -s -X POST http://127.0.0.1:${ports.apiPort}/v1/jobs -H 'Authorization: Bearer ${devToken ?? '<token>'}' \\`,
        `       -H 'Idempotency-Key: my-first-job' -H 'Content-Type: application/json' \\`,
        `       -d '{"type":"summarize","input":{"text":"Temporal keeps workflows durable. PostgreSQL keeps the record."}}'`,
        '',
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
  } catch (error) {
    console.error(`[onejob] ${(error as Error).message}`);
    await stopAll(1);
  }
}

void main();
