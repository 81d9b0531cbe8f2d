import type { IncomingMessage } from 'node:http';

/** What a process may do with its tracing at the end: send what is still buffered. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/** Requests that only ask whether the process is alive, ready or how it is doing: not traced. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Whether this process traces: the OpenTelemetry way, by its standard variables. On only when
 * spans have somewhere to go (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none says otherwise.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the OpenTelemetry SDK for Node when tracing is wanted, else loads none of it (tracing
 * off costs nothing). Spans go out over OTLP (HTTP, protobuf); the OTEL_* variables choose the
 * endpoint, the sampler (OTEL_TRACES_SAMPLER, default: every trace, or as its caller decided)
 * and the service name (OTEL_SERVICE_NAME, else `serviceName`). HTTP (a caller's W3C
 * traceparent is joined) and PostgreSQL are instrumented: statements, never their values. Must
 * run before `http` and `pg` are first loaded, so the services' entry points call it first.
 */
export function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
): Tracing | undefined {
  if (!tracingWanted(env)) return undefined;
  // Traces only: metrics are Prometheus's (/metrics), logs are pino's.
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK } =
    require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || serviceName,
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) =>
          UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
      }),
      // A statement outside any request or job is not a trace of its own.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
