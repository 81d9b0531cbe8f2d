import { closeSync, openSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { goInstall, isExecutable, onejobCacheDir, type BuildManners } from './goInstall';
import { freePort, spawnGuarded, waitForHttp, type GuardedProcess } from './processes';
import { logTail } from './temporalServer';

/**
 * Jaeger v2, the trace backend of the dev stack and of the tests that read traces back: one
 * binary (an OpenTelemetry collector with Jaeger's storage and query API), pinned, found at
 * JAEGER_PATH, else in the per-user cache, else built once from the Go module proxy. Its module
 * tag v1.75.0 is the v2 binary; `go install` refuses it (its go.mod has replace directives), so
 * it is built as a tool of a module of its own (../shared/TEMPORAL-NOTES.md). The module carries
 * no built web UI (Jaeger's release process adds it): what this binary serves is an OTLP
 * receiver and the query API (`/api/traces/<id>`, what the tests and `onejob jobs trace` read);
 * its root page is a placeholder, so nothing of ours calls it a UI. The compose file's image has
 * the UI.
 */
export const JAEGER_MODULE_VERSION = '1.75.0';
const JAEGER_PACKAGE = 'github.com/jaegertracing/jaeger/cmd/jaeger';

const cachedJaeger = (): string =>
  path.join(onejobCacheDir('jaeger', `v${JAEGER_MODULE_VERSION}`), 'jaeger');

/** Jaeger without building it: JAEGER_PATH, else the cache; undefined if neither has it. */
export function findJaeger(): string | undefined {
  const given = process.env.JAEGER_PATH;
  if (given) {
    if (!isExecutable(given)) throw new Error(`JAEGER_PATH=${given} is not an executable file`);
    return given;
  }
  return isExecutable(cachedJaeger()) ? cachedJaeger() : undefined;
}

/** Jaeger, built into the cache if it is not there yet (minutes, the first time). */
export async function obtainJaeger(
  log: (line: string) => void,
  manners: BuildManners = {},
): Promise<string> {
  const found = findJaeger();
  if (found) return found;
  await goInstall(
    {
      what: `Jaeger (module v${JAEGER_MODULE_VERSION})`,
      packages: [`${JAEGER_PACKAGE}@v${JAEGER_MODULE_VERSION}`],
      asTool: true,
      binaries: { jaeger: 'jaeger' },
      cacheDir: path.dirname(cachedJaeger()),
      alternative: 'set JAEGER_PATH to a Jaeger v2 binary, or ONEJOB_TRACE_UI=off',
    },
    log,
    manners,
  );
  return cachedJaeger();
}

export interface JaegerPorts {
  /** The query API (`/api/traces/<id>`), and the web UI in a build that has one. */
  query: number;
  /** OTLP over HTTP, where services send their spans (`/v1/traces`). */
  otlpHttp: number;
  /** The query service's gRPC port (unused by us, but it must not collide). */
  queryGrpc: number;
  health: number;
}

export interface Jaeger {
  /** The query service: its API is under `/api`. */
  queryUrl: string;
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpEndpoint: string;
  process: GuardedProcess;
  stop(): Promise<void>;
}

/** Everything on loopback, on the ports given; traces kept in memory only. */
function configFor(ports: JaegerPorts): string {
  const at = (port: number): string => `127.0.0.1:${port}`;
  return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: ${at(ports.health)}
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: ${at(ports.query)}
    grpc:
      endpoint: ${at(ports.queryGrpc)}
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${at(ports.otlpHttp)}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`;
}

/** Starts Jaeger with its config and log in `dir`; resolves once its query API answers. */
export async function startJaeger(options: {
  binary: string;
  dir: string;
  ports?: Partial<JaegerPorts>;
}): Promise<Jaeger> {
  await mkdir(options.dir, { recursive: true });
  const ports: JaegerPorts = {
    query: options.ports?.query ?? (await freePort()),
    otlpHttp: options.ports?.otlpHttp ?? (await freePort()),
    queryGrpc: options.ports?.queryGrpc ?? (await freePort()),
    health: options.ports?.health ?? (await freePort()),
  };
  const config = path.join(options.dir, 'jaeger.yaml');
  await writeFile(config, configFor(ports));
  const logFile = path.join(options.dir, 'jaeger.log');
  const logFd = openSync(logFile, 'a');
  const proc = spawnGuarded(options.binary, ['--config', config], {
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const queryUrl = `http://127.0.0.1:${ports.query}`;
  try {
    await waitForHttp(`${queryUrl}/api/services`, 60_000, proc.exited);
  } catch (error) {
    await proc.stop();
    throw new Error(`Jaeger: ${(error as Error).message}\n--- ${logFile} ---\n${logTail(logFile)}`);
  }
  return {
    queryUrl,
    otlpEndpoint: `http://127.0.0.1:${ports.otlpHttp}`,
    process: proc,
    stop: () => proc.stop(),
  };
}
