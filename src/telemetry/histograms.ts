import {
  Counter,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type LabelValues,
  type OpenMetricsContentType,
} from 'prom-client';
import { sampledSpanIds } from './spans';

/**
 * Where a process keeps its metrics. An OpenMetrics registry, since prom-client keeps exemplars
 * only in one; each scrape is still answered in the format it asks for (exposition).
 */
export type MetricsRegistry = Registry<OpenMetricsContentType>;

export function metricsRegistry(): MetricsRegistry {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return registry;
}

/**
 * Latency buckets in seconds, one set for every histogram so that they can be read side by side:
 * from a few milliseconds (a create answered from its row) to the minutes a slow provider, or a
 * `?wait=` request, may take.
 */
export const LATENCY_BUCKETS_S = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

/**
 * For what may wait on an operator: a job, an unknown attempt. The latency buckets, then up to a
 * week (a status lookup settles in seconds, an operator in hours or days).
 */
export const JOB_BUCKETS_S = [
  ...LATENCY_BUCKETS_S,
  900,
  3_600,
  4 * 3_600,
  24 * 3_600,
  7 * 24 * 3_600,
];

/** The API's: each request, from its arrival to its answer. */
export function httpRequestHistogram(registry: MetricsRegistry) {
  return new Histogram({
    name: 'onejob_http_request_duration_seconds',
    help: 'HTTP requests from arrival to answer, by route (its template), method and status class',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS_S,
    enableExemplars: true,
    registers: [registry],
  });
}

/**
 * Jobs from creation to end, by type and the status they ended in. Observed by the process whose
 * statement ended the job (a worker's compare-and-swap or failure, an API's operator cancel or
 * callback), so each job is counted once across the fleet: sum the replicas' series.
 */
export function jobDurationHistogram(registry: MetricsRegistry) {
  return new Histogram({
    name: 'onejob_job_duration_seconds',
    help: 'Jobs from creation to end, by job type and the status they ended in; each job is observed once, by the process that ended it',
    labelNames: ['type', 'status'] as const,
    buckets: JOB_BUCKETS_S,
    enableExemplars: true,
    registers: [registry],
  });
}

/** What observes a job's end: the API's and the worker's metrics both have it. */
export type JobEndMetrics = { jobSeconds: Histogram<'type' | 'status'> };

/**
 * The worker's own metrics, beside the Temporal SDK's (ONEJOB_WORKER_METRICS_ADDRESS): served with
 * its health checks at ONEJOB_WORKER_HEALTH_ADDRESS.
 */
export interface WorkerMetrics {
  registry: MetricsRegistry;
  /** Each provider call, from its request to its end, by provider and by what the attempt became. */
  providerCallSeconds: Histogram<'provider' | 'outcome'>;
  /** Hedged jobs admitted to run one provider at a time: hedging's budget was spent. */
  hedgingPaused: Counter<'primary'>;
  jobSeconds: JobEndMetrics['jobSeconds'];
  /**
   * How long attempts stayed unknown, by provider and what settled them into (succeeded, lost,
   * failed, cancelled): observed by the reconciler that wakes the workflow of each settled one.
   */
  unknownSeconds: Histogram<'provider' | 'settled_as'>;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = metricsRegistry();
  collectDefaultMetrics({ register: registry, prefix: 'onejob_worker_' });
  return {
    registry,
    providerCallSeconds: new Histogram({
      name: 'onejob_provider_call_duration_seconds',
      help: 'Provider calls from request to end (a late answer included), by provider and by the attempt state it left: succeeded, lost, failed or unknown',
      labelNames: ['provider', 'outcome'] as const,
      buckets: LATENCY_BUCKETS_S,
      enableExemplars: true,
      registers: [registry],
    }),
    hedgingPaused: new Counter({
      name: 'onejob_hedging_paused_total',
      help: 'Hedged jobs this worker admitted to run one provider at a time because hedging’s budget was spent, by primary provider',
      labelNames: ['primary'] as const,
      registers: [registry],
    }),
    jobSeconds: jobDurationHistogram(registry),
    unknownSeconds: new Histogram({
      name: 'onejob_attempt_unknown_duration_seconds',
      help: 'How long attempts stayed unknown before something settled them, by provider and what they settled as; each is observed once, by the worker that woke its workflow',
      labelNames: ['provider', 'settled_as'] as const,
      buckets: JOB_BUCKETS_S,
      enableExemplars: true,
      registers: [registry],
    }),
  };
}

/**
 * Observes `value`, with the trace it was measured in as the bucket's exemplar when that trace is
 * recorded: a slow bucket in a dashboard leads to one such request's or job's trace.
 */
export function observe<T extends string>(
  histogram: Histogram<T>,
  labels: LabelValues<T>,
  value: number,
): void {
  const ids = sampledSpanIds();
  histogram.observe({
    labels,
    value,
    // prom-client types an exemplar's labels as the metric's own; OpenMetrics allows any.
    ...(ids ? { exemplarLabels: { trace_id: ids.traceId } as LabelValues<T> } : {}),
  });
}

let rendering: Promise<unknown> = Promise.resolve();

/**
 * A registry's metrics as the scraper asked: OpenMetrics (which alone carries exemplars) when its
 * Accept names it, as Prometheus's does, else the Prometheus text format. prom-client renders the
 * format its registry is set to, and renames counters while it renders OpenMetrics: renderings
 * take turns, and each puts the format and the names back.
 */
export function exposition(
  registry: MetricsRegistry,
  accept: string | undefined,
): Promise<{ contentType: string; body: string }> {
  const format = /application\/openmetrics-text/i.test(accept ?? '')
    ? Registry.OPENMETRICS_CONTENT_TYPE
    : Registry.PROMETHEUS_CONTENT_TYPE;
  const render = async () => {
    const names = registry.getMetricsAsArray().map((metric) => [metric, metric.name] as const);
    // Typed to the format it was made with; it renders either.
    registry.setContentType(format as OpenMetricsContentType);
    try {
      return { contentType: format, body: await registry.metrics() };
    } finally {
      registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
      for (const [metric, name] of names) metric.name = name;
    }
  };
  const turn = rendering.then(render, render);
  rendering = turn.catch(() => undefined);
  return turn;
}
