import { closeSync, openSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { goInstall, isExecutable, onejobCacheDir } from './goInstall';
import { freePort, spawnGuarded, waitForHttp, type GuardedProcess } from './processes';
import { logTail } from './temporalServer';

/**
 * Jaeger v2, the trace backend of the dev stack and of the tests that read traces back: one
 * binary (an OpenTelemetry collector with Jaeger's storage, query API and UI), pinned, found at
 * JAEGER_PATH, else in the per-user cache, else built once from the Go module proxy. Its module
 * tag v1.75.0 is the v2 binary; `go install` refuses it (its go.mod has replace directives), so
 * it is built as a tool of a module of its own (../shared/TEMPORAL-NOTES.md). The module carries
 * no built UI (Jaeger's release process adds it), so this binary's UI address serves Jaeger's
 * placeholder page; its query API (/api/traces/…, what the tests read) is whole, and the
 * compose file's image has the UI.
 */
export const JAEGER_MODULE_VERSION = '1.75.0';
const JAEGER_PACKAGE = 'github.com/jaegertracing/jaeger/cmd/jaeger';

export async function obtainJaeger(log: (line: string) => void): Promise<string> {
  const given = process.env.JAEGER_PATH;
  if (given) {
    if (!isExecutable(given)) throw new Error(`JAEGER_PATH=${given} is not an executable file`);
    return given;
  }
  const cacheDir = onejobCacheDir('jaeger', `v${JAEGER_MODULE_VERSION}`);
  const cached = path.join(cacheDir, 'jaeger');
  if (!isExecutable(cached))
    await goInstall(
      {
        what: `Jaeger (module v${JAEGER_MODULE_VERSION})`,
        packages: [`${JAEGER_PACKAGE}@v${JAEGER_MODULE_VERSION}`],
        asTool: true,
        binaries: { jaeger: 'jaeger' },
        cacheDir,
        alternative: 'set JAEGER_PATH to a Jaeger v2 binary, or turn the trace UI off',
      },
      log,
    );
  return cached;
}

export interface JaegerPorts {
  /** The UI and its query API (`/api/traces/<id>`). */
  ui: number;
  /** OTLP over HTTP, where services send their spans (`/v1/traces`). */
  otlpHttp: number;
  /** The query service's gRPC port (unused by us, but it must not collide). */
  queryGrpc: number;
  health: number;
}

export interface Jaeger {
  /** The UI, and the query API under `/api`. */
  uiUrl: string;
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
      endpoint: ${at(ports.ui)}
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

/** Starts Jaeger with its config and log in `dir`; resolves once its UI answers. */
export async function startJaeger(options: {
  binary: string;
  dir: string;
  ports?: Partial<JaegerPorts>;
}): Promise<Jaeger> {
  await mkdir(options.dir, { recursive: true });
  const ports: JaegerPorts = {
    ui: options.ports?.ui ?? (await freePort()),
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
  const uiUrl = `http://127.0.0.1:${ports.ui}`;
  try {
    await waitForHttp(`${uiUrl}/api/services`, 60_000, proc.exited);
  } catch (error) {
    await proc.stop();
    throw new Error(`Jaeger: ${(error as Error).message}\n--- ${logFile} ---\n${logTail(logFile)}`);
  }
  return {
    uiUrl,
    otlpEndpoint: `http://127.0.0.1:${ports.otlpHttp}`,
    process: proc,
    stop: () => proc.stop(),
  };
}
