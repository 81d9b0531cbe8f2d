import path from 'node:path';
import { certificationPlan, certifyMany } from '../../src/certification/certify';
import {
  databaseRecordFile,
  removeDatabaseRecord,
  withoutPassword,
  writeDatabaseRecord,
} from '../../src/cli/databaseRecord';
import { ensureStateFolder, stateFolder } from '../../src/cli/stateFolder';
import { removeTraceQueryRecord, writeTraceQueryRecord } from '../../src/cli/traceQueryRecord';
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
import { startTraceBackend, type TraceBackend } from './traceBackend';

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
  signal: AbortSignal,
): Promise<DevServer> {
  const cli = await obtainTemporalCli(log, { signal });
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
  /** Stopping aborts what is still being obtained (a first start's build of the CLI). */
  const starting = new AbortController();
  let temporalStarting: Promise<DevServer> | undefined;
  let temporalServer: DevServer | undefined;
  let traces: TraceBackend | undefined;
  let database: ResolvedDatabase | undefined;
  let stopping: Promise<void> | undefined;

  const stopAll = (exitCode: number): Promise<void> => {
    stopping ??= (async () => {
      log('stopping…');
      starting.abort(new Error('npm start is stopping'));
      // Front to back: the API stops taking requests before the worker and servers go.
      for (const child of [...children].reverse()) await child.stop();
      await (await temporalStarting?.catch(() => undefined))?.stop();
      await traces?.stop();
      await database?.stop();
      removeDatabaseRecord(stateDir, process.pid);
      removeTraceQueryRecord(stateDir, process.pid);
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

    const engine = temporalEngineKind();
    // The dev server needs nothing else of the stack: its CLI is obtained (built, the first
    // time: minutes) while PostgreSQL, the migrations, the simulator and certification go ahead.
    if (!process.env.TEMPORAL_ADDRESS && engine === 'dev') {
      temporalStarting = startDevEngine(stateDir, ports, starting.signal);
      temporalStarting.catch(() => undefined); // awaited below; a failure is reported there
    }

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

    if (process.env.TEMPORAL_ADDRESS)
      log(`Temporal: using ${process.env.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS); starting no server`);
    else if (engine === 'cluster')
      // The production engine keeps its state in this PostgreSQL: started once it is there.
      temporalStarting = startClusterEngine(database, stateDir, ports);

    if (ports.traces) {
      // Started now if it is cached; else built once the stack serves (it only adds a view).
      traces = await startTraceBackend({
        stateDir,
        queryPort: ports.traceQueryPort,
        otlpPort: ports.traceOtlpPort,
        log,
        // For `onejob jobs trace`, as database.json is for the other commands.
        onQueryApi: (queryUrl) => writeTraceQueryRecord(stateDir, { queryUrl, pid: process.pid }),
      });
      // The services trace, and send their spans there.
      env.OTEL_EXPORTER_OTLP_ENDPOINT = traces.otlpEndpoint;
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
    let temporalUi: string | undefined;
    if (temporalStarting) {
      temporalServer = await temporalStarting;
      env.TEMPORAL_ADDRESS = temporalServer.address;
      temporalUi = temporalServer.uiUrl;
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
        `  API             http://127.0.0.1:${ports.apiPort}/v1/jobs   (POST a job, GET /v1/jobs/:id)`,
        `    reference     http://127.0.0.1:${ports.apiPort}/docs   (OpenAPI, to read and try)`,
        ...(temporalUi ? [`  Temporal Web UI ${temporalUi}`] : []),
        `  Temporal gRPC   ${env.TEMPORAL_ADDRESS}${
          !temporalServer
            ? '   (TEMPORAL_ADDRESS)'
            : engine === 'cluster'
              ? `   (Temporal server v${TEMPORAL_SERVER_VERSION} on PostgreSQL)`
              : '   (dev server; ONEJOB_TEMPORAL_ENGINE=cluster runs the production engine)'
        }`,
        `  Simulator       http://127.0.0.1:${ports.simulatorPort}/_simulator/requests   (the stand-in provider, and what it was asked)`,
        ...(traces
          ? traces.bannerLines()
          : [`  Traces          ${tracingWanted(env) ? `to ${otlpTracesEndpoint(env)}` : 'off'}`]),
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
    // Only now: a build of what only adds a view never stands before the first answer.
    traces?.finishInBackground();
  } catch (error) {
    console.error(`[onejob] ${(error as Error).message}`);
    await stopAll(1);
  }
}

void main();
