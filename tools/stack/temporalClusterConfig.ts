import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { temporalConnectionSettings, temporalConnectOptions } from '../../src/temporal/connection';
import { freePort, isPortFree } from './processes';

/**
 * What the Temporal server of cluster mode is configured with: its ports, its static
 * configuration file, the dynamic configuration it shares with docker-compose.yml, TLS.
 */

const REPO_ROOT = PACKAGE_ROOT;
/** The namespace cluster mode registers and the Web UI opens. */
export const CLUSTER_NAMESPACE = 'default';
/** Shared with docker-compose.yml: the same dynamic configuration values. */
export const DYNAMIC_CONFIG = path.join(REPO_ROOT, 'deploy', 'temporal', 'dynamicconfig.yaml');
/**
 * How far ahead of now the history service schedules every timer at the earliest
 * (`history.timerProcessorMaxTimeShift`). Temporal's default, 1 s, made a 250 ms hedge delay
 * (or any sub-second timer) take about a second; both engines run with this instead
 * (docs/engines.md). The dev server is given it on its command line, the production engine
 * in DYNAMIC_CONFIG (a test checks the two agree).
 */
export const TIMER_MAX_TIME_SHIFT = '100ms';
/** Fixed when the databases are created; docker-compose's server uses the same. */
export const HISTORY_SHARDS = 4;

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
  /** Prometheus metrics of every service (they share one process), when set. */
  metrics?: number;
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
    metrics: await freePort(),
  };
}

/** The parts of a cluster's options its configuration file is made from. */
export interface ClusterLayout {
  /** The history database; visibility lives in `<name>_visibility`. */
  databaseName: string;
  ports: ClusterPorts;
  /** Serve the frontend over mutual TLS (cluster mode then starts no Web UI). */
  tls?: ClusterTls;
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

/** How a client of ours connects to the cluster: as the services would, given its TLS files. */
export function clusterConnectOptions(address: string, tls?: ClusterTls) {
  return temporalConnectOptions(
    temporalConnectionSettings({
      TEMPORAL_ADDRESS: address,
      ...(tls && {
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caFile,
        TEMPORAL_TLS_CLIENT_CERT_PATH: tls.clientCertFile,
        TEMPORAL_TLS_CLIENT_KEY_PATH: tls.clientKeyFile,
        TEMPORAL_TLS_SERVER_NAME: tls.serverName,
      }),
    }),
  );
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

function metricsConfig(port: number): string {
  return ['  metrics:', '    prometheus:', `      listenAddress: "127.0.0.1:${port}"`, ''].join(
    '\n',
  );
}

/** The server's static configuration, in the shape of the server's own sample configs. */
export function clusterServerConfig(options: ClusterLayout, database: PostgresEndpoint): string {
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
  return `# Generated by onejob (tools/stack/temporalClusterConfig.ts) at each start; edits are overwritten.
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
${ports.metrics ? metricsConfig(ports.metrics) : ''}${options.tls ? tlsConfig(options.tls) : ''}services:
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

export function uiConfig(frontend: number, uiPort: number): string {
  return `# Generated by onejob (tools/stack/temporalClusterConfig.ts) at each start; edits are overwritten.
temporalGrpcAddress: 127.0.0.1:${frontend}
host: 127.0.0.1
port: ${uiPort}
enableUi: true
defaultNamespace: ${CLUSTER_NAMESPACE}
notifyOnNewVersion: false
cors:
  allowOrigins:
    - http://127.0.0.1:${uiPort}
`;
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
