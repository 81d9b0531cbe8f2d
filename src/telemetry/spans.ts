import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

/** Names onejob's own spans' source in a trace (beside http, pg and Temporal's). */
const TRACER_NAME = 'onejob';

/**
 * Runs `work` inside a new span, the current one's child, ended when `work` settles (an error
 * is recorded on it). Where the process does not trace, the API's tracer is a no-op: nothing is
 * made, nothing is sent.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The trace and span the caller runs in, when that span is recorded (sampled); else none. */
export function sampledSpanIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return (traceFlags & 1) === 1 ? { traceId, spanId } : undefined;
}
