import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { ensureSearchAttributes } from '../../src/temporal/searchAttributes';
import { spawnGuarded, waitForHttp, type GuardedProcess } from './processes';
import type { TemporalClusterBinaries } from './temporalClusterBinaries';
import {
  CLUSTER_NAMESPACE,
  clusterConnectOptions,
  clusterServerConfig,
  postgresEndpoint,
  uiConfig,
  type ClusterLayout,
  type ClusterPorts,
  type PostgresEndpoint,
} from './temporalClusterConfig';
import { logTail, waitForTemporal, type DevServer } from './temporalServer';

/**
 * The production engine on one machine: the real Temporal server (frontend, history, matching
 * and worker services in one process) on PostgreSQL persistence with SQL visibility, its
 * schema set up by Temporal's SQL tool, the `default` namespace and our search attributes
 * registered, and the Web UI server beside it.
 */

const REPO_ROOT = PACKAGE_ROOT;
/** Shared with docker-compose.yml: the same schema steps. */
export const SCHEMA_SCRIPT = path.join(REPO_ROOT, 'deploy', 'temporal', 'setup-postgres-schema.sh');
/** docker-compose.yml registers its namespace with this script, and the same retention. */
export const NAMESPACE_SCRIPT = path.join(REPO_ROOT, 'deploy', 'temporal', 'create-namespace.sh');
export const CLUSTER_RETENTION_MS = 3 * 24 * 3600 * 1000;
const GRPC_ALREADY_EXISTS = 6;
const grpcCode = (error: unknown): number | undefined => (error as { code?: number })?.code;

export interface ClusterOptions extends ClusterLayout {
  binaries: TemporalClusterBinaries;
  /** A PostgreSQL server where we may create databases. */
  adminDatabaseUrl: string;
  /** Holds the generated configuration and the logs. */
  dir: string;
  /** Web UI port; undefined (or no UI server binary) runs without one. */
  uiPort?: number;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

/** Runs the shared schema script (create the databases, then apply every schema version). */
export async function setUpClusterSchema(
  binaries: Pick<TemporalClusterBinaries, 'sqlTool' | 'postgresSchemaDir'>,
  database: PostgresEndpoint,
  databaseName: string,
): Promise<void> {
  try {
    await promisify(execFile)('sh', [SCHEMA_SCRIPT], {
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

/**
 * A readiness probe for `namespace`: registers it and our search attributes (each step does
 * nothing when already done), then runs a visibility query on them, which answers only once the
 * frontend's namespace cache has the namespace. A new cluster is probed with `default`; a
 * campaign sharing a server is probed with a namespace of its own.
 */
export function namespaceReady(namespace: string): (connection: Connection) => Promise<void> {
  return async (connection) => {
    await connection.workflowService
      .registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(CLUSTER_RETENTION_MS),
      })
      .catch((error: unknown) => {
        if (grpcCode(error) !== GRPC_ALREADY_EXISTS) throw error;
      });
    await ensureSearchAttributes(connection, namespace);
    await connection.workflowService.listWorkflowExecutions({
      namespace,
      pageSize: 1,
      query: 'JobOwner = "readiness-check"',
    });
  };
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
    await waitForTemporal(address, {
      timeoutMs,
      exited: server.exited,
      connect: clusterConnectOptions(address, options.tls),
      probe: namespaceReady(CLUSTER_NAMESPACE),
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
