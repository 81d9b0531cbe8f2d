import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startJaeger, type Jaeger } from '../tools/stack/jaeger';
import { jaegerBinary, TEST_OUTPUT } from './support/harness';
import { freshKey } from './support/jobs';
import { eventually } from './support/polling';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Traces, read back from a real Jaeger: the API's spans go out over OTLP when the OTEL_*
 * variables say where, join a caller's W3C traceparent, and answer with the trace in
 * `traceresponse`.
 */
let jaeger: Jaeger;
let stack: TestStack;
beforeAll(async () => {
  jaeger = await startJaeger({
    binary: jaegerBinary(),
    dir: path.join(TEST_OUTPUT, `jaeger-${process.pid}`),
  });
  stack = await startTestStack({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      // Spans leave within a tenth of a second, not the default five.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await jaeger?.stop();
});

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; spanID: string }>;
  tags: Array<{ key: string; value: unknown }>;
  processID: string;
}
interface JaegerTrace {
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

/** The trace as Jaeger's query API has it so far (none until its first span arrives). */
async function traceOf(traceId: string): Promise<JaegerTrace | undefined> {
  const response = await fetch(`${jaeger.uiUrl}/api/traces/${traceId}`);
  if (response.status === 404) return undefined;
  const { data } = (await response.json()) as { data: JaegerTrace[] };
  return data[0];
}

const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;

test("a create that brings a W3C traceparent joins the caller's trace: its server span, named by its route, is the caller's span's child, and its PostgreSQL statements are under it", async () => {
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const created = await stack.request('POST', '/v1/jobs', {
    headers: {
      'idempotency-key': freshKey('traced'),
      traceparent: `00-${traceId}-${callerSpan}-01`,
    },
    body: { type: 'summarize', input: { text: 'Follow me from the request to the database.' } },
  });
  expect(created.status).toBe(201);
  expect(created.headers.get('traceresponse')).toMatch(
    new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`),
  );
  const serverSpanId = created.headers.get('traceresponse')!.split('-')[2];

  const found = await eventually(
    () => traceOf(traceId),
    (trace) => trace?.spans.some((s) => tag(s, 'db.system.name') ?? tag(s, 'db.system')) ?? false,
  );
  const server = found!.spans.find((s) => s.spanID === serverSpanId)!;
  expect(server.operationName).toBe('POST /v1/jobs');
  expect(found!.processes[server.processID]!.serviceName).toBe('onejob-api');
  expect(server.references).toEqual([
    expect.objectContaining({ refType: 'CHILD_OF', spanID: callerSpan }),
  ]);
  const statements = found!.spans.filter((s) => tag(s, 'db.system.name') ?? tag(s, 'db.system'));
  const parentOf = new Map(found!.spans.map((s) => [s.spanID, s.references[0]?.spanID]));
  for (const statement of statements) {
    // Under the request's span, however deep.
    let ancestor = parentOf.get(statement.spanID);
    while (ancestor !== undefined && ancestor !== serverSpanId) ancestor = parentOf.get(ancestor);
    expect([statement.operationName, ancestor]).toEqual([statement.operationName, serverSpanId]);
    // Statements, never the values bound to them.
    expect(JSON.stringify(statement.tags)).not.toContain('Follow me from the request');
  }
});

test('a request without traceparent starts a trace of its own and names it in traceresponse; health checks are not traced', async () => {
  const answer = await stack.request('GET', `/v1/jobs/${crypto.randomUUID()}`);
  expect(answer.status).toBe(404);
  const [, traceId] = answer.headers.get('traceresponse')!.split('-');
  const found = await eventually(
    () => traceOf(traceId!),
    (trace) => trace !== undefined,
  );
  expect(found!.spans.map((s) => s.operationName)).toContain('GET /v1/jobs/:id');

  const health = await fetch(`${stack.apiUrl}/healthz`);
  expect(health.headers.get('traceresponse')).toBeNull();
});
