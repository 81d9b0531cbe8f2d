import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Latency buckets in seconds, one set for every histogram so that they can be read side by side:
 * from a few milliseconds (a create answered from its row) to the minutes a slow provider, or a
 * `?wait=` request, may take.
 */
export const LATENCY_BUCKETS_S = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

/** The API's: each request, from its arrival to its answer. */
export function httpRequestHistogram(registry: Registry) {
  return new Histogram({
    name: 'onejob_http_request_duration_seconds',
    help: 'HTTP requests from arrival to answer, by route (its template), method and status class',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS_S,
    registers: [registry],
  });
}

/**
 * The worker's own metrics, beside the Temporal SDK's (ONEJOB_WORKER_METRICS_ADDRESS): served with
 * its health checks at ONEJOB_WORKER_HEALTH_ADDRESS.
 */
export interface WorkerMetrics {
  registry: Registry;
  /** Each provider call, from its request to its end, by provider and by what the attempt became. */
  providerCallSeconds: Histogram<'provider' | 'outcome'>;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'onejob_worker_' });
  return {
    registry,
    providerCallSeconds: new Histogram({
      name: 'onejob_provider_call_duration_seconds',
      help: 'Provider calls from request to end (a late answer included), by provider and by the attempt state it left: succeeded, lost, failed or unknown',
      labelNames: ['provider', 'outcome'] as const,
      buckets: LATENCY_BUCKETS_S,
      registers: [registry],
    }),
  };
}
