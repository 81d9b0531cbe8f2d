import { workerAddresses } from '../../src/config';
import { DEFAULTS } from '../../src/domain/defaults';
import { hostAndPort, port } from '../../src/settings/read';
import { otlpTracesEndpoint, tracingDisabled } from '../../src/telemetry/tracing';
import { portHolder } from './portHolder';
import { isPortFree } from './processes';

/** Ports of the dev stack started by `npm start`, and the names of its database. */
export function devStackConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    apiPort: port(env, 'PORT', DEFAULTS.apiPort),
    temporalPort: port(env, 'TEMPORAL_PORT', DEFAULTS.temporalPort),
    temporalUiPort: port(env, 'TEMPORAL_UI_PORT', 8233),
    simulatorPort: port(env, 'SIMULATOR_PORT', DEFAULTS.simulatorPort),
    /** Where the worker serves the Temporal SDK's metrics (`host:port`, or `off`). */
    workerMetricsAddress: workerAddresses(env).metricsAddress,
    /** Where the worker answers /healthz and /readyz (`host:port`, or `off`). */
    workerHealthAddress: workerAddresses(env).healthAddress,
    databaseName: env.ONEJOB_DATABASE_NAME ?? 'onejob',
    /**
     * Jaeger, the trace backend, runs unless ONEJOB_TRACE_UI=off, or the services' spans go
     * elsewhere (an OTLP endpoint of your own), or the OTEL_* variables turn tracing off.
     */
    traces:
      env.ONEJOB_TRACE_UI !== 'off' &&
      !tracingDisabled(env) &&
      otlpTracesEndpoint(env) === undefined,
    /** Jaeger's query API (and its web UI, in a build that has one). */
    traceQueryPort: port(env, 'JAEGER_QUERY_PORT', 16686),
    /** Where Jaeger takes OTLP over HTTP from the services. */
    traceOtlpPort: port(env, 'JAEGER_OTLP_PORT', 4318),
  };
}

/** A port `npm start` will listen on, and the variable that moves it. */
export interface PlannedPort {
  port: number;
  host: string;
  variable: string;
  what: string;
}

/**
 * Checks every planned port before anything slow starts; throws one line per busy port naming
 * who holds it and the variable that moves it.
 */
export async function checkPorts(planned: PlannedPort[]): Promise<void> {
  const busy: string[] = [];
  for (const { port, host, variable, what } of planned) {
    if (await isPortFree(port, host)) continue;
    const holder = portHolder(port);
    const by = holder ? `pid ${holder.pid} (${holder.command})` : 'another process';
    busy.push(
      `port ${port} (${what}) is taken by ${by}: stop it, or set ${variable} to another port`,
    );
  }
  if (busy.length > 0) throw new Error(busy.join('; '));
}

/** Every port npm start will listen on, with the variable that moves it. */
export function devStackPorts(
  ports: ReturnType<typeof devStackConfig>,
  env: NodeJS.ProcessEnv = process.env,
): PlannedPort[] {
  const local = '127.0.0.1';
  // `off`: the worker serves nothing there, so there is no port to check.
  const workerAddress = (address: string, variable: string, what: string): PlannedPort[] =>
    address === 'off' ? [] : [{ ...hostAndPort(address, variable), variable, what }];
  return [
    { port: ports.apiPort, host: local, variable: 'PORT', what: 'the API' },
    { port: ports.simulatorPort, host: local, variable: 'SIMULATOR_PORT', what: 'the simulator' },
    ...workerAddress(
      ports.workerMetricsAddress,
      'ONEJOB_WORKER_METRICS_ADDRESS',
      "the worker's metrics",
    ),
    ...workerAddress(
      ports.workerHealthAddress,
      'ONEJOB_WORKER_HEALTH_ADDRESS',
      "the worker's health checks",
    ),
    ...(ports.traces
      ? [
          {
            port: ports.traceQueryPort,
            host: local,
            variable: 'JAEGER_QUERY_PORT',
            what: "Jaeger's query API",
          },
          {
            port: ports.traceOtlpPort,
            host: local,
            variable: 'JAEGER_OTLP_PORT',
            what: "Jaeger's OTLP receiver",
          },
        ]
      : []),
    // With TEMPORAL_ADDRESS set, no Temporal server of ours listens anywhere.
    ...(env.TEMPORAL_ADDRESS
      ? []
      : [
          { port: ports.temporalPort, host: local, variable: 'TEMPORAL_PORT', what: 'Temporal' },
          {
            port: ports.temporalUiPort,
            host: local,
            variable: 'TEMPORAL_UI_PORT',
            what: 'the Temporal Web UI',
          },
        ]),
  ];
}
