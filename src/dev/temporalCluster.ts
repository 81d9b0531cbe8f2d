import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureSearchAttributes } from '../temporalSetup';
import {
  freePort,
  isPortFree,
  sleep,
  spawnGuarded,
  waitForHttp,
  type GuardedProcess,
} from './processes';
import type { TemporalClusterBinaries } from './temporalClusterBinaries';
import { logTail, waitForTemporal, type DevServer } from './temporalServer';

/**
 * The production engine on one machine: the real Temporal server (frontend, history, matching
 * and worker services in one process) on PostgreSQL persistence with SQL visibility, its
 * schema set up by Temporal's SQL tool, the `default` namespace and our search attributes
 * registered, and the Web UI server beside it.
 */

const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** Shared with docker-compose.yml: the same schema steps and dynamic configuration. */
export const SCHEMA_SCRIPT = path.join(REPO_ROOT, 'deploy', 'temporal', 'setup-postgres-schema.sh');
export const DYNAMIC_CONFIG = path.join(REPO_ROOT, 'deploy', 'temporal', 'dynamicconfig.yaml');
/** Fixed when the databases are created; docker-compose's server uses the same. */
export const HISTORY_SHARDS = 4;
const NAMESPACE = 'default';
const RETENTION_MS = 3 * 24 * 3600 * 1000;

export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/** Free ports for every service but the frontend, whose port the caller chooses. */
export async function pickClusterPorts(frontend?: number): Promise<ClusterPorts> {
  return {
    frontend: frontend ?? (await freePort()),
    frontendHttp: await freePort(),
    frontendMembership: await freePort(),
    history: await freePort(),
    historyMembership: await freePort(),
    matching: await freePort(),
    matchingMembership: await freePort(),
    worker: await freePort(),
    workerMembership: await freePort(),
  };
}

export interface ClusterOptions {
  binaries: TemporalClusterBinaries;
  /** A PostgreSQL server where we may create databases. */
  adminDatabaseUrl: string;
  /** The history database; visibility lives in `<name>_visibility`. */
  databaseName: string;
  /** Holds the generated configuration and the logs. */
  dir: string;
  ports: ClusterPorts;
  /** Web UI port; undefined (or no UI server binary) runs without one. */
  uiPort?: number;
  /** Serve the frontend over mutual TLS (then the Web UI is not started). */
  tls?: ClusterTls;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

/** PEM files for a frontend that requires client certificates signed by `caFile`. */
export interface ClusterTls {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** What the server's own system workers (and our readiness checks) present. */
  clientCertFile: string;
  clientKeyFile: string;
  /** The name in the server certificate. */
  serverName: string;
}

/** How a client of ours connects to the cluster: plain, or with the cluster's client pair. */
export function clusterConnectOptions(address: string, tls?: ClusterTls) {
  if (!tls) return { address };
  return {
    address,
    tls: {
      serverRootCACertificate: readFileSync(tls.caFile),
      clientCertPair: {
        crt: readFileSync(tls.clientCertFile),
        key: readFileSync(tls.clientKeyFile),
      },
      serverNameOverride: tls.serverName,
    },
  };
}

export interface PostgresEndpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function postgresEndpoint(url: string): PostgresEndpoint {
  const parsed = new URL(url);
  return {
    host: parsed.hostname || '127.0.0.1',
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username || 'postgres'),
    password: decodeURIComponent(parsed.password),
  };
}

/** Runs the shared schema script (create the databases, then apply every schema version). */
export async function setUpClusterSchema(
  binaries: Pick<TemporalClusterBinaries, 'sqlTool' | 'postgresSchemaDir'>,
  database: PostgresEndpoint,
  databaseName: string,
): Promise<void> {
  try {
    await promisify(execFile)('bash', [SCHEMA_SCRIPT], {
      env: {
        PATH: process.env.PATH,
        SQL_TOOL: binaries.sqlTool,
        TEMPORAL_SCHEMA_DIR: binaries.postgresSchemaDir,
        SQL_HOST: database.host,
        SQL_PORT: String(database.port),
        SQL_USER: database.user,
        SQL_PASSWORD: database.password,
        TEMPORAL_DB: databaseName,
        TEMPORAL_VISIBILITY_DB: `${databaseName}_visibility`,
      },
      maxBuffer: 16 << 20,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    const tail = `${stdout ?? ''}${stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`setting up the Temporal schema in ${databaseName} failed:\n${tail}`);
  }
}

/** The server's static configuration, in the shape of the server's own sample configs. */
export function clusterServerConfig(options: ClusterOptions, database: PostgresEndpoint): string {
  const { ports } = options;
  const store = (name: string, maxConns: number): string =>
    [
      `      sql:`,
      `        pluginName: postgres12`,
      `        databaseName: ${JSON.stringify(name)}`,
      `        connectAddr: ${JSON.stringify(`${database.host}:${database.port}`)}`,
      `        connectProtocol: tcp`,
      `        user: ${JSON.stringify(database.user)}`,
      `        password: ${JSON.stringify(database.password)}`,
      `        maxConns: ${maxConns}`,
      `        maxIdleConns: ${maxConns}`,
      `        maxConnLifetime: 1h`,
    ].join('\n');
  const service = (grpc: number, membership: number, http?: number): string =>
    [
      `    rpc:`,
      `      grpcPort: ${grpc}`,
      `      membershipPort: ${membership}`,
      `      bindOnLocalHost: true`,
      ...(http ? [`      httpPort: ${http}`] : []),
    ].join('\n');
  return `# Generated by onejob (src/dev/temporalCluster.ts) at each start; edits are overwritten.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: history
  visibilityStore: visibility
  numHistoryShards: ${HISTORY_SHARDS}
  datastores:
    history:
${store(options.databaseName, 20)}
    visibility:
${store(`${options.databaseName}_visibility`, 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
${options.tls ? tlsConfig(options.tls) : ''}services:
  frontend:
${service(ports.frontend, ports.frontendMembership, ports.frontendHttp)}
  history:
${service(ports.history, ports.historyMembership)}
  matching:
${service(ports.matching, ports.matchingMembership)}
  worker:
${service(ports.worker, ports.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.frontend}
dcRedirectionPolicy:
  policy: noop
archival:
  history:
    state: disabled
  visibility:
    state: disabled
namespaceDefaults:
  archival:
    history:
      state: disabled
    visibility:
      state: disabled
dynamicConfigClient:
  filepath: ${JSON.stringify(DYNAMIC_CONFIG)}
  pollInterval: 10s
`;
}

/** The frontend requires client certificates; the server's own system workers present one. */
function tlsConfig(tls: ClusterTls): string {
  const client = [
    `        serverName: ${JSON.stringify(tls.serverName)}`,
    `        rootCaFiles: [${JSON.stringify(tls.caFile)}]`,
  ].join('\n');
  return `  tls:
    frontend:
      server:
        certFile: ${JSON.stringify(tls.serverCertFile)}
        keyFile: ${JSON.stringify(tls.serverKeyFile)}
        requireClientAuth: true
        clientCaFiles: [${JSON.stringify(tls.caFile)}]
      client:
${client}
    systemWorker:
      certFile: ${JSON.stringify(tls.clientCertFile)}
      keyFile: ${JSON.stringify(tls.clientKeyFile)}
      client:
${client}
`;
}

function uiConfig(frontend: number, uiPort: number): string {
  return `# Generated by onejob (src/dev/temporalCluster.ts) at each start; edits are overwritten.
temporalGrpcAddress: 127.0.0.1:${frontend}
host: 127.0.0.1
port: ${uiPort}
enableUi: true
defaultNamespace: ${NAMESPACE}
notifyOnNewVersion: false
cors:
  allowOrigins:
    - http://127.0.0.1:${uiPort}
`;
}

const grpcCode = (error: unknown): number | undefined => (error as { code?: number })?.code;
const GRPC_ALREADY_EXISTS = 6;

/** The `default` namespace and our search attributes, then a query that uses them. */
async function registerNamespace(
  address: string,
  timeoutMs: number,
  tls?: ClusterTls,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connection = await Connection.connect({
    ...clusterConnectOptions(address, tls),
    connectTimeout: 5_000,
  });
  try {
    await connection.workflowService
      .registerNamespace({
        namespace: NAMESPACE,
        workflowExecutionRetentionPeriod: msToTs(RETENTION_MS),
      })
      .catch((error: unknown) => {
        if (grpcCode(error) !== GRPC_ALREADY_EXISTS) throw error;
      });
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        // The namespace reaches the frontend's cache within moments (system.namespaceCacheRefreshInterval).
        await ensureSearchAttributes(connection, NAMESPACE);
        await connection.workflowService.listWorkflowExecutions({
          namespace: NAMESPACE,
          pageSize: 1,
          query: 'JobOwner = "readiness-check"',
        });
        return;
      } catch (error) {
        lastError = error;
        await sleep(250);
      }
    }
    throw new Error(
      `namespace ${NAMESPACE} not usable after ${timeoutMs} ms: ${(lastError as Error)?.message}`,
    );
  } finally {
    await connection.close();
  }
}

export interface TemporalCluster extends DevServer {
  ports: ClusterPorts;
  databaseName: string;
}

/**
 * Sets up the schema (idempotent), writes the configuration, starts the server and, when asked,
 * the Web UI server; resolves once the namespace and search attributes are usable. Starting
 * again with the same options resumes the same cluster (its state is in PostgreSQL).
 */
export async function startTemporalCluster(options: ClusterOptions): Promise<TemporalCluster> {
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  const database = postgresEndpoint(options.adminDatabaseUrl);
  await setUpClusterSchema(options.binaries, database, options.databaseName);

  const configDir = path.join(options.dir, 'config');
  mkdirSync(configDir, { recursive: true });
  // Holds the database password: readable by us alone.
  writeFileSync(path.join(configDir, 'onejob.yaml'), clusterServerConfig(options, database), {
    mode: 0o600,
  });
  const logFile = path.join(options.dir, 'temporal-server.log');
  const logFd = openSync(logFile, 'a');
  const server = spawnGuarded(
    options.binaries.server,
    ['--root', options.dir, '--config', 'config', '--env', 'onejob', '--allow-no-auth', 'start'],
    { stdio: ['ignore', logFd, logFd] },
  );
  closeSync(logFd);
  const address = `127.0.0.1:${options.ports.frontend}`;
  let ui: GuardedProcess | undefined;
  const stop = async (): Promise<void> => {
    await ui?.stop();
    await server.stop();
  };
  try {
    // The frontend answers before any namespace exists.
    await waitForTemporal(address, {
      timeoutMs,
      exited: server.exited,
      connect: clusterConnectOptions(address, options.tls),
      probe: (connection) => connection.workflowService.getSystemInfo({}),
    });
    await registerNamespace(address, timeoutMs, options.tls);
    await waitForTemporal(address, {
      timeoutMs,
      exited: server.exited,
      connect: clusterConnectOptions(address, options.tls),
    });
    if (options.uiPort !== undefined && options.binaries.uiServer && !options.tls) {
      const uiDir = path.join(options.dir, 'ui');
      mkdirSync(uiDir, { recursive: true });
      writeFileSync(
        path.join(uiDir, 'onejob.yaml'),
        uiConfig(options.ports.frontend, options.uiPort),
      );
      const uiFd = openSync(path.join(options.dir, 'temporal-ui.log'), 'a');
      ui = spawnGuarded(
        options.binaries.uiServer,
        ['--root', uiDir, '--config', '.', '--env', 'onejob', 'start'],
        { stdio: ['ignore', uiFd, uiFd] },
      );
      closeSync(uiFd);
      await waitForHttp(`http://127.0.0.1:${options.uiPort}/`, timeoutMs, ui.exited);
    }
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- ${logFile} ---\n${logTail(logFile)}`);
  }
  log(`Temporal server on ${address}, state in PostgreSQL (${options.databaseName})`);
  return {
    address,
    uiUrl: ui ? `http://127.0.0.1:${options.uiPort}` : undefined,
    process: server,
    stop,
    ports: options.ports,
    databaseName: options.databaseName,
  };
}

/** Reads the ports a state folder's cluster used before, so a restart keeps its membership. */
export async function clusterPortsFor(dir: string, frontend: number): Promise<ClusterPorts> {
  const file = path.join(dir, 'ports.json');
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as ClusterPorts;
    const othersFree = await Promise.all(
      Object.entries(saved)
        .filter(([name]) => name !== 'frontend')
        .map(([, port]) => isPortFree(port)),
    );
    if (saved.frontend === frontend && othersFree.every(Boolean)) return saved;
  } catch {
    // first start in this folder
  }
  const ports = await pickClusterPorts(frontend);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(ports, null, 2));
  return ports;
}
