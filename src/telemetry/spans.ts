import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { TokenUsage } from '../domain/cost';

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

/**
 * A call's usage as the OpenTelemetry GenAI semantic conventions name it, beside our own
 * attributes: every input token (cache reads and writes included), the output, and the cache
 * reads and writes apart; a count the provider did not report is left out.
 */
export function genAiUsageAttributes(usage: TokenUsage | undefined): Record<string, number> {
  if (!usage) return {};
  const names = {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cachedInputTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cacheCreationInputTokens,
  };
  return Object.fromEntries(
    Object.entries(names).filter(([, count]) => count !== undefined),
  ) as Record<string, number>;
}
