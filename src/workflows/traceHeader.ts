/**
 * Whether a Temporal call carries a trace to join, for both sides of it: the workflow's gated
 * interceptors (tracing.ts) and the worker's activities (telemetry/temporalTracing.ts). The header is the
 * one Temporal's OpenTelemetry interceptors write: a text map with the W3C traceparent.
 */
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-([0-9a-f]{2})$/;

/** True when `headers` carry a W3C traceparent whose caller chose to record it (sampled). */
export function carriesTrace(headers: Headers | undefined): boolean {
  const payload = headers?.[TRACE_HEADER];
  if (!payload) return false;
  try {
    const carrier = defaultPayloadConverter.fromPayload<Record<string, unknown> | null>(payload);
    const flags = typeof carrier?.traceparent === 'string' && TRACEPARENT.exec(carrier.traceparent);
    return Boolean(flags) && (parseInt(flags ? flags[1]! : '0', 16) & 1) === 1;
  } catch {
    return false;
  }
}
