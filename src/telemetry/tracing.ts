import { propagation } from '@opentelemetry/api';
import type { BatchSpanProcessorOptions, ReadableSpan } from '@opentelemetry/sdk-trace';
import type { IncomingMessage } from 'node:http';

/** Whether a request's `Authorization` header names a caller whose trace context is taken. */
export type TrustedCaller = (authorization: string | undefined) => boolean;

/** A process's tracing, when it traces. */
export interface Tracing {
  /** Sends what is still buffered, then stops. */
  shutdown(): Promise<void>;
  /**
   * Where spans ended outside this process's tracer go out with its own (the worker's workflow
   * sandbox makes spans of its own): the same batch, exporter and resource.
   */
  exportEnded(spans: ReadonlyArray<Omit<ReadableSpan, 'resource'>>): void;
  /**
   * Whose trace context incoming requests may bring (the API: its owners and operators, once
   * their tokens are read). Until then, and in the worker, nobody's: see keepTrustedContext.
   */
  trustCallers(trusted: TrustedCaller): void;
}

/** Requests that only ask whether the process is alive, ready or how it is doing: not traced. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The user agent of webhook tries. Their URLs are an owner's, often with a token in the path or
 * the query: the HTTP instrumentation neither records them nor sends our trace context to the
 * receiver (webhookDelivery.ts makes a span of its own, naming the host only).
 */
export const WEBHOOK_USER_AGENT = 'onejob-webhooks';

function isWebhookTry(options: { headers?: unknown }): boolean {
  const headers = (options.headers ?? {}) as Record<string, unknown>;
  return Object.entries(headers).some(
    ([name, value]) => name.toLowerCase() === 'user-agent' && value === WEBHOOK_USER_AGENT,
  );
}

/**
 * Runs before the HTTP instrumentation reads a request's trace context. A caller may join its
 * trace to ours (and have it recorded, if it says so) only when `trusted` knows its token: an
 * unknown caller's sampled traceparent would otherwise load the trace backend at will, and tie
 * our traces to its own. Its trace headers are dropped, so the request is a root of our own that
 * our sampler decides. `baggage` is dropped from every caller, whatever OTEL_PROPAGATORS says:
 * nothing here reads it, and taken in it would go on to the workflow and the providers.
 */
function keepTrustedContext(request: IncomingMessage, trusted: TrustedCaller): void {
  const headers = request.headers;
  delete headers.baggage;
  const carried = propagation.fields().filter((field) => headers[field] !== undefined);
  if (carried.length === 0 || trusted(headers.authorization)) return;
  for (const field of carried) delete headers[field];
}

/**
 * Whether this process traces: the OpenTelemetry way, by its standard variables. On only when
 * spans have somewhere to go (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none says otherwise.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return !tracingDisabled(env) && otlpTracesEndpoint(env) !== undefined;
}

/** Tracing turned off by the standard variables, wherever spans would go. */
export function tracingDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none';
}

/** Where spans go by the standard variables (the traces-only one first), if anywhere. */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
}

/**
 * Starts the OpenTelemetry SDK for Node when tracing is wanted, else loads none of it (tracing
 * off costs nothing). Spans go out over OTLP (HTTP, protobuf); the OTEL_* variables choose the
 * endpoint, the sampler (OTEL_TRACES_SAMPLER, default: every trace, or as its caller decided)
 * and the service name (OTEL_SERVICE_NAME, else `serviceName`). HTTP (a trusted caller's W3C
 * traceparent is joined: see keepTrustedContext) and PostgreSQL are instrumented: statements,
 * never their values. Must run before `http` and `pg` are first loaded, so the services' entry
 * points call it first.
 */
export function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
): Tracing | undefined {
  if (!tracingWanted(env)) return undefined;
  // Traces only: metrics are Prometheus's (/metrics), logs are pino's.
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  // W3C trace context only: a caller's `baggage` (anyone's, unauthenticated too) is not taken in,
  // nor passed on to providers.
  env.OTEL_PROPAGATORS ??= 'tracecontext';
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK } =
    require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { resourceFromAttributes } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME || serviceName,
  });
  const batch = new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) });
  let trusted: TrustedCaller = () => false;
  const sdk = new NodeSDK({
    resource,
    spanProcessors: [batch],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) =>
          UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
        // Called before the caller's context is extracted (a test pins it: tracing.test.ts).
        startIncomingSpanHook: (request: IncomingMessage) => {
          keepTrustedContext(request, trusted);
          return {};
        },
        ignoreOutgoingRequestHook: isWebhookTry,
      }),
      // A statement outside any request or job is not a trace of its own. A pool checkout is
      // not a span: it would double the statements' spans, and a wait for a connection shows
      // as the gap before its statement.
      new PgInstrumentation({
        enhancedDatabaseReporting: false,
        requireParentSpan: true,
        ignoreConnectSpans: true,
      }),
    ],
  });
  sdk.start();
  return {
    shutdown: () => sdk.shutdown(),
    exportEnded: (spans) => {
      for (const span of spans) batch.onEnd({ ...span, resource });
    },
    trustCallers: (check) => {
      trusted = check;
    },
  };
}

/** The batch's settings by the standard OTEL_BSP_* variables (unset: the SDK's defaults). */
function batchOptions(env: NodeJS.ProcessEnv): Omit<BatchSpanProcessorOptions, 'exporter'> {
  const number = (name: string): number | undefined => {
    const value = Number(env[name]);
    return env[name] && Number.isFinite(value) && value >= 0 ? value : undefined;
  };
  const options = {
    maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: number('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: number('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}
