/**
 * Jaeger's query API answer (`GET /api/traces…`), as much of it as the CLI reads, and the
 * terminal tree `onejob jobs trace` prints from it. Pure: a recorded answer renders the same.
 */
export interface JaegerTag {
  key: string;
  type?: string;
  value: unknown;
}
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references?: Array<{ refType: string; traceID?: string; spanID: string }> | null;
  /** Microseconds since the epoch. */
  startTime: number;
  /** Microseconds. */
  duration: number;
  tags?: JaegerTag[] | null;
  processID: string;
}
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

const tagOf = (span: JaegerSpan, key: string): unknown =>
  span.tags?.find((tag) => tag.key === key)?.value;

/** One line of what a span's text may hold: names and values come from outside. */
const oneLine = (value: unknown): string => String(value).replace(/\s+/g, ' ').trim();

export const milliseconds = (micros: number): string => `${(micros / 1000).toFixed(1)} ms`;

/**
 * What an operator reads off a span, compact: who was called for which attempt and how it ended,
 * what it cost, how a compare-and-swap went and where its result came from, what a lookup
 * heard, a webhook's event and answer; `error` when the span ended in one.
 */
export function spanFacts(span: JaegerSpan): string[] {
  const facts: string[] = [];
  const add = (name: string, key: string): void => {
    const value = tagOf(span, key);
    if (value !== undefined && value !== '') facts.push(`${name}=${oneLine(value)}`);
  };
  add('provider', 'onejob.provider');
  add('model', 'onejob.model');
  add('attempt', 'onejob.attempt_id');
  add('outcome', 'onejob.outcome');
  if (tagOf(span, 'onejob.certainty') === 'ambiguous') facts.push('certainty=ambiguous');
  const cost = tagOf(span, 'onejob.cost');
  if (cost !== undefined) {
    const currency = tagOf(span, 'onejob.cost_currency');
    facts.push(`cost=${oneLine(cost)}${currency === undefined ? '' : ` ${oneLine(currency)}`}`);
  }
  if (tagOf(span, 'onejob.late') === true) facts.push('late');
  add('lookup', 'onejob.lookup');
  add('cas', 'onejob.cas');
  add('winner', 'onejob.winner_attempt_id');
  add('source', 'onejob.result_source');
  add('event', 'onejob.webhook_event');
  if (span.operationName === 'webhook try') add('status', 'http.response.status_code');
  add('code', 'onejob.error_code');
  // Jaeger turns an OpenTelemetry error status into `error=true` (and otel.status_code).
  if (tagOf(span, 'error') === true || tagOf(span, 'otel.status_code') === 'ERROR')
    facts.push('error');
  return facts;
}

/** The span's parent within the trace, if the trace holds it (else the span is a root). */
function parentOf(span: JaegerSpan, ids: Set<string>): string | undefined {
  const parent = span.references?.find((ref) => ref.refType === 'CHILD_OF')?.spanID;
  return parent !== undefined && parent !== span.spanID && ids.has(parent) ? parent : undefined;
}

const byStart = (a: JaegerSpan, b: JaegerSpan): number =>
  a.startTime - b.startTime || a.operationName.localeCompare(b.operationName);

/** When the trace starts and how long it lasts, from its first start to its last end. */
export function traceSpan(trace: JaegerTrace): { start: number; duration: number } {
  if (trace.spans.length === 0) return { start: 0, duration: 0 };
  const start = Math.min(...trace.spans.map((s) => s.startTime));
  const end = Math.max(...trace.spans.map((s) => s.startTime + s.duration));
  return { start, duration: end - start };
}

/**
 * One trace: a header (id, spans, duration, start), then each span on a line of its own,
 * indented two spaces a level under its parent, children in the order they started.
 */
export function renderTrace(trace: JaegerTrace): string {
  const { start, duration } = traceSpan(trace);
  const lines = [
    `trace ${trace.traceID}  ${trace.spans.length} span${trace.spans.length === 1 ? '' : 's'}  ${milliseconds(duration)}  ${new Date(start / 1000).toISOString()}`,
  ];
  const ids = new Set(trace.spans.map((s) => s.spanID));
  const children = new Map<string | undefined, JaegerSpan[]>();
  for (const span of trace.spans) {
    const parent = parentOf(span, ids);
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const shown = new Set<JaegerSpan>();
  const walk = (span: JaegerSpan, depth: number): void => {
    if (shown.has(span)) return;
    shown.add(span);
    const service = trace.processes[span.processID]?.serviceName ?? span.processID;
    const facts = spanFacts(span);
    lines.push(
      [
        `${'  '.repeat(depth)}${oneLine(span.operationName)}`,
        milliseconds(span.duration),
        oneLine(service),
        ...(facts.length > 0 ? [facts.join(' ')] : []),
      ].join('  '),
    );
    for (const child of (children.get(span.spanID) ?? []).sort(byStart)) walk(child, depth + 1);
  };
  for (const root of (children.get(undefined) ?? []).sort(byStart)) walk(root, 0);
  // Spans whose parents form a loop (a malformed answer) reach no root: shown, not lost.
  for (const span of [...trace.spans].sort(byStart)) walk(span, 0);
  return lines.join('\n');
}

/** Several traces, oldest first, a blank line between. */
export function renderTraces(traces: JaegerTrace[]): string {
  return [...traces]
    .sort((a, b) => traceSpan(a).start - traceSpan(b).start)
    .map(renderTrace)
    .join('\n\n');
}
