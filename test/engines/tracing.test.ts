import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TokenPrice } from '../../src/providers/provider';
import { simulatorProviders } from '../../src/providers/registry';
import { startJob } from '../../src/temporal/startJob';
import { startJaeger, type Jaeger } from '../../tools/stack/jaeger';
import { jaegerBinary, TEST_OUTPUT } from '../support/harness';
import { OPERATOR_TOKEN, TEST_TOKEN } from '../support/identities';
import { chargeBody, freshKey, succeeded, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { chatProvider } from '../support/providers';
import { attemptRows } from '../support/rows';
import { certifyForSetup, startTestStack, type TestStack } from '../support/stack';
import { untilWorkflowClosed } from '../support/temporal';

const FALLBACK_PRICE: TokenPrice = { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 };

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
    // Its own process, which traces as the API does (by the same variables).
    workerProcess: true,
    providers: (url) => [
      chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000 }),
      chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000, price: FALLBACK_PRICE }),
      // A payment provider with a status lookup.
      ...simulatorProviders(url).filter((provider) => provider.name === 'simulator-pay'),
    ],
    hedgeDelayMs: 300,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      // Spans leave within a tenth of a second, not the default five.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
  await certifyForSetup(stack, [['fallback', 'summarize']]);
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
  const response = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
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

  // The API's statements; the worker's, which join the trace once the workflow runs, are not
  // this request's (their spans arrive as that work goes on, their ancestors later still).
  const apiStatements = (trace: JaegerTrace) =>
    trace.spans.filter(
      (s) =>
        (tag(s, 'db.system.name') ?? tag(s, 'db.system')) &&
        trace.processes[s.processID]?.serviceName === 'onejob-api',
    );
  /** The span `id` hangs under, however deep, as far as the trace has arrived. */
  const rootOf = (trace: JaegerTrace, id: string): string | undefined => {
    const parentOf = new Map(trace.spans.map((s) => [s.spanID, s.references[0]?.spanID]));
    let ancestor = parentOf.get(id);
    while (ancestor !== undefined && ancestor !== serverSpanId) ancestor = parentOf.get(ancestor);
    return ancestor;
  };
  // Spans leave in batches as they end: wait for the request's span and its statements' chains.
  const found = await eventually(
    () => traceOf(traceId),
    (trace) =>
      trace !== undefined &&
      trace.spans.some((s) => s.spanID === serverSpanId) &&
      apiStatements(trace).length > 0 &&
      apiStatements(trace).every((s) => rootOf(trace, s.spanID) === serverSpanId),
  );
  const server = found!.spans.find((s) => s.spanID === serverSpanId)!;
  expect(server.operationName).toBe('POST /v1/jobs');
  expect(found!.processes[server.processID]!.serviceName).toBe('onejob-api');
  expect(server.references).toEqual([
    expect.objectContaining({ refType: 'CHILD_OF', spanID: callerSpan }),
  ]);
  for (const statement of apiStatements(found!)) {
    // Under the request's span, however deep.
    expect([statement.operationName, rootOf(found!, statement.spanID)]).toEqual([
      statement.operationName,
      serverSpanId,
    ]);
  }
  // Statements, never the values bound to them, in either process.
  for (const statement of found!.spans.filter(
    (s) => tag(s, 'db.system.name') ?? tag(s, 'db.system'),
  ))
    expect(JSON.stringify(statement.tags)).not.toContain('Follow me from the request');
});

test('a request without traceparent starts a trace of its own and names it in traceresponse; health checks are not traced', async () => {
  const answer = await stack.request('GET', `/v1/jobs/${crypto.randomUUID()}`);
  expect(answer.status).toBe(404);
  const [, traceId] = answer.headers.get('traceresponse')!.split('-');
  // Its statements' spans may arrive first: wait for the request's own.
  const found = await eventually(
    () => traceOf(traceId!),
    (trace) => trace?.spans.some((s) => s.operationName === 'GET /v1/jobs/:id') ?? false,
  );
  expect(found!.spans.filter((s) => s.operationName === 'GET /v1/jobs/:id')).toHaveLength(1);

  const health = await fetch(`${stack.apiUrl}/healthz`);
  expect(health.headers.get('traceresponse')).toBeNull();
});

/** The span's chain of parents within the trace, nearest first (ends where Jaeger has no parent). */
function ancestors(trace: JaegerTrace, span: JaegerSpan): string[] {
  const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
  const chain: string[] = [];
  for (let parent = byId.get(span.references[0]?.spanID ?? ''); parent;) {
    chain.push(parent.operationName);
    parent = byId.get(parent.references[0]?.spanID ?? '');
  }
  return chain;
}

const serviceOf = (trace: JaegerTrace, span: JaegerSpan): string | undefined =>
  trace.processes[span.processID]?.serviceName;

test("one trace per job: a hedged job whose primary is held shows, under the trace its create's answer named, both attempts' provider calls (provider, model, attempt, outcome, certainty, cost), the winner's compare-and-swap won and the held answer's lost", async () => {
  // The earlier tests' jobs are done first: none of their calls can take the held answer.
  await eventually(
    async () =>
      (
        await stack.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM jobs WHERE terminal_status IS NULL',
        )
      ).rows[0]!.n,
    (open) => open === 0,
  );
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'hold', gate: 'traced-hedge' },
  });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('traced-hedge') },
    body: {
      type: 'summarize',
      input: { text: 'Secret prompt text. The first call is held; the hedge answers and wins.' },
      providers: ['primary', 'fallback'],
      mode: 'hedged',
    },
  });
  expect(created.status).toBe(201);
  const [, traceId] = created.headers.get('traceresponse')!.split('-');
  const { id, workflowId } = (await created.json()) as { id: string; workflowId: string };
  await untilJob(stack, id, succeeded);
  // The held call answers only now, after the job has its result: its answer loses.
  stack.simulator.openGate('traced-hedge');
  await eventually(
    () => attemptRows(stack.pool, id),
    (rows) => rows[0]?.state === 'lost',
  );
  expect(await untilWorkflowClosed(stack, workflowId)).toBe('COMPLETED');

  const calls = (t: JaegerTrace) => t.spans.filter((s) => s.operationName === 'provider call');
  const swaps = (t: JaegerTrace) => t.spans.filter((s) => s.operationName === 'compare-and-swap');
  // Every span has arrived when both calls and both swaps have, each chained up to the create.
  const found = (await eventually(
    () => traceOf(traceId!),
    (t) =>
      t !== undefined &&
      calls(t).length === 2 &&
      swaps(t).length === 2 &&
      [...calls(t), ...swaps(t)].every((s) => ancestors(t, s).at(-1) === 'POST /v1/jobs'),
  ))!;
  const byAttempt = (spans: JaegerSpan[], seq: number) =>
    spans.find((s) => tag(s, 'onejob.attempt_id') === `${id}:${seq}`)!;

  const [held, hedge] = [byAttempt(calls(found), 1), byAttempt(calls(found), 2)];
  expect(serviceOf(found, held)).toBe('onejob-worker');
  expect([tag(held, 'onejob.provider'), tag(held, 'onejob.model')]).toEqual([
    'primary',
    'sim-steady',
  ]);
  expect([tag(hedge, 'onejob.provider'), tag(hedge, 'onejob.model')]).toEqual([
    'fallback',
    'sim-backup',
  ]);
  expect([tag(held, 'onejob.outcome'), tag(hedge, 'onejob.outcome')]).toEqual([
    'lost',
    'succeeded',
  ]);
  expect([tag(held, 'onejob.certainty'), tag(hedge, 'onejob.certainty')]).toEqual([
    'definite',
    'definite',
  ]);
  expect(tag(hedge, 'onejob.cost')).toBeGreaterThan(0);
  expect(tag(hedge, 'onejob.cost_currency')).toBe('USD');
  // The path a call took to the provider: the activity, scheduled by the workflow, started by the create.
  expect(ancestors(found, hedge)).toEqual([
    'RunActivity:callProvider',
    'StartActivity:callProvider',
    'RunWorkflow:jobWorkflow',
    'StartWorkflow:jobWorkflow',
    'POST /v1/jobs',
  ]);

  const [lost, won] = [byAttempt(swaps(found), 1), byAttempt(swaps(found), 2)];
  expect(tag(won, 'onejob.cas')).toBe('won');
  expect([tag(lost, 'onejob.cas'), tag(lost, 'onejob.winner_attempt_id')]).toEqual([
    'lost',
    `${id}:2`,
  ]);
  expect(ancestors(found, lost)[0]).toBe('provider call');

  // Who was asked what, never with what.
  expect(JSON.stringify(found)).not.toContain('Secret prompt text');
  // The worker's log line for the lost race names the trace and the span it was written in.
  const raceLine = stack
    .serviceLogs()
    .find((line) => line.event === 'race_lost' && line.attemptId === `${id}:1`);
  expect([raceLine?.traceId, raceLine?.spanId]).toEqual([traceId, lost.spanID]);

  // Scraped as OpenMetrics, the histograms name this trace as an exemplar: the create's latency
  // on the API, the held call's and the job's duration on the worker.
  const exemplarsOf = async (url: string, metric: string) =>
    (
      await (
        await fetch(`${url}/metrics`, { headers: { accept: 'application/openmetrics-text' } })
      ).text()
    )
      .split('\n')
      .filter((line) => line.startsWith(`${metric}_bucket{`) && line.includes(' # {'));
  const worker = `http://${stack.serviceEnv.ONEJOB_WORKER_HEALTH_ADDRESS}`;
  const withTrace = (lines: string[]) => lines.filter((l) => l.includes(`trace_id="${traceId}"`));
  expect(
    withTrace(await exemplarsOf(worker, 'onejob_provider_call_duration_seconds')).filter((l) =>
      l.includes('provider="primary",outcome="lost"'),
    ),
  ).toHaveLength(1);
  expect(
    withTrace(await exemplarsOf(worker, 'onejob_job_duration_seconds')).filter((l) =>
      l.includes('type="summarize",status="succeeded"'),
    ),
  ).toHaveLength(1);
  expect(
    withTrace(await exemplarsOf(stack.apiUrl, 'onejob_http_request_duration_seconds')).filter((l) =>
      l.includes('route="/v1/jobs",method="POST"'),
    ),
  ).toHaveLength(1);
});

test("a Temporal-native startJob made inside the caller's span joins the caller's trace: its update-with-start is that span's child, and the job's provider call is in the trace", async () => {
  // The calling service's own tracing, as it would set it up; its spans are kept here.
  const callerSpans = new InMemorySpanExporter();
  const callerTracing = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: callerSpans })],
  });
  trace.setGlobalTracerProvider(callerTracing);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  try {
    const client = new Client({
      connection: stack.temporal.connection,
      interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    });
    const { traceId, started } = await trace
      .getTracer('calling-service')
      .startActiveSpan('place order', async (span) => {
        try {
          const job = await startJob(client, {
            owner: 'svc-traced',
            idempotencyKey: freshKey('traced-native'),
            type: 'summarize',
            input: { text: 'Started from a workflow client, traced from its caller.' },
            providers: ['fallback'],
            taskQueue: stack.taskQueue,
          });
          return { traceId: span.spanContext().traceId, started: job };
        } finally {
          span.end();
        }
      });
    expect((await started.result()).status).toBe('succeeded');

    // The caller's update-with-start is its span's child; what it started is under that.
    const [caller, start] = ['place order', 'UpdateWithStartWorkflow:admit'].map((name) =>
      callerSpans.getFinishedSpans().find((s) => s.name === name)!,
    );
    expect(start!.parentSpanContext?.spanId).toBe(caller!.spanContext().spanId);
    const startId = start!.spanContext().spanId;
    const found = (await eventually(
      () => traceOf(traceId),
      (t) =>
        t?.spans.some((s) => s.operationName === 'provider call' && ancestors(t, s).length === 3) ??
        false,
    ))!;
    const run = found.spans.find((s) => s.operationName === 'RunWorkflow:jobWorkflow')!;
    expect(run.references[0]?.spanID).toBe(startId);
    const call = found.spans.find((s) => s.operationName === 'provider call')!;
    expect(ancestors(found, call)).toEqual([
      'RunActivity:callProvider',
      'StartActivity:callProvider',
      'RunWorkflow:jobWorkflow',
    ]);
    expect(tag(call, 'onejob.attempt_id')).toBe(`${started.jobId}:1`);
    expect(serviceOf(found, call)).toBe('onejob-worker');
  } finally {
    await callerTracing.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }
});

test("a status lookup is in the job's trace: what the provider said, under the workflow's look, and the compare-and-swap its answer went through", async () => {
  // The charge is made, and the connection drops before its answer: the attempt is unknown, and
  // the workflow's look asks the provider's status.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('traced-lookup') },
    body: chargeBody(['simulator-pay']),
  });
  expect(created.status).toBe(201);
  const [, traceId] = created.headers.get('traceresponse')!.split('-');
  const { id } = (await created.json()) as { id: string };
  await untilJob(stack, id, succeeded);

  const named = (t: JaegerTrace, name: string) => t.spans.filter((s) => s.operationName === name);
  const found = (await eventually(
    () => traceOf(traceId!),
    (t) =>
      t !== undefined &&
      named(t, 'status lookup').length === 1 &&
      named(t, 'compare-and-swap').length === 1 &&
      ancestors(t, named(t, 'status lookup')[0]!).at(-1) === 'POST /v1/jobs',
  ))!;
  const [lookup] = named(found, 'status lookup');
  expect([
    tag(lookup!, 'onejob.provider'),
    tag(lookup!, 'onejob.attempt_id'),
    tag(lookup!, 'onejob.lookup'),
  ]).toEqual(['simulator-pay', `${id}:1`, 'succeeded']);
  expect(ancestors(found, lookup!)).toContain('RunWorkflow:jobWorkflow');
  const [swap] = named(found, 'compare-and-swap');
  expect([tag(swap!, 'onejob.cas'), tag(swap!, 'onejob.result_source')]).toEqual([
    'won',
    'status-lookup',
  ]);
  expect(ancestors(found, swap!)[0]).toBe(ancestors(found, lookup!)[0]);
});

test("a webhook try sends its receiver no trace context, and its span names the receiver's host only: the token in the endpoint's path and query reaches no span", async () => {
  const seen: IncomingHttpHeaders[] = [];
  const receiver = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const secret = randomBytes(8).toString('hex');
  const { port } = receiver.address() as AddressInfo;
  const registered = await stack.request('POST', '/v1/webhooks', {
    body: {
      url: `http://127.0.0.1:${port}/hooks/path-${secret}?token=query-${secret}`,
      events: ['job.succeeded'],
    },
  });
  expect(registered.status).toBe(201);
  const endpoint = ((await registered.json()) as { id: string }).id;
  try {
    const traceId = randomBytes(16).toString('hex');
    const created = await stack.request('POST', '/v1/jobs', {
      headers: {
        'idempotency-key': freshKey('traced-webhook'),
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        baggage: `onejob.owner=mallory,secret=${secret}`,
      },
      body: { type: 'summarize', input: { text: 'Tell my receiver, not my tracer.' } },
    });
    expect(created.status).toBe(201);
    const job = (await created.json()) as { id: string };
    await untilJob(stack, job.id, succeeded);
    await eventually(
      async () => seen.length,
      (n) => n === 1,
    );
    expect(seen[0]).not.toHaveProperty('traceparent');
    expect(seen[0]).not.toHaveProperty('tracestate');
    expect(seen[0]).not.toHaveProperty('baggage');
    // The worker's span of the try, found by its job.
    const found = await eventually(
      async () => {
        const response = await fetch(
          `${jaeger.queryUrl}/api/traces?service=onejob-worker&operation=${encodeURIComponent('webhook try')}&limit=50&lookback=1h`,
        );
        const { data } = (await response.json()) as { data: JaegerTrace[] };
        return data.filter((t) =>
          t.spans.some(
            (s) => s.operationName === 'webhook try' && tag(s, 'onejob.job_id') === job.id,
          ),
        );
      },
      (traces) => traces.length > 0,
    );
    const tried = found[0]!.spans.find((s) => s.operationName === 'webhook try')!;
    expect(tag(tried, 'server.address')).toBe('127.0.0.1');
    const jobTrace = await traceOf(traceId);
    expect(JSON.stringify([found, jobTrace])).not.toContain(secret);
  } finally {
    await stack.request('DELETE', `/v1/webhooks/${endpoint}`);
    await new Promise((resolve) => receiver.close(resolve));
  }
});

/**
 * An API replica that samples no trace of its own (ratio 0) and whose OTEL_PROPAGATORS names
 * `baggage`: what a caller's headers bring is all that could get a request recorded.
 */
async function withUnsampledApi(use: (url: string) => Promise<void>): Promise<void> {
  const extra = await stack.startExtraApi({
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
    OTEL_PROPAGATORS: 'tracecontext,baggage',
  });
  try {
    await use(extra.url);
  } finally {
    await extra.stop();
  }
}

const sampledParent = () => ({
  traceId: randomBytes(16).toString('hex'),
  spanId: randomBytes(8).toString('hex'),
});

test("a caller without a valid token can neither force sampling nor join its trace: under a sampler ratio of 0, its sampled traceparent (no token, a wrong one, the docs, a provider callback) leaves no span in that trace, while an owner's or an operator's joins the caller's trace", async () => {
  await withUnsampledApi(async (url) => {
    const unknownJob = `/v1/jobs/${crypto.randomUUID()}`;
    const untrusted: Array<[string, string, string, Record<string, string>]> = [
      ['no token', 'GET', unknownJob, {}],
      ['a wrong token', 'GET', unknownJob, { authorization: 'Bearer not-a-token-of-ours' }],
      ['the docs', 'GET', '/docs/json', {}],
      [
        'a provider callback',
        'POST',
        '/v1/callbacks/simulator-pay',
        { 'content-type': 'application/json', 'onejob-signature': 't=1,v1=00' },
      ],
    ];
    const refused: string[] = [];
    for (const [, method, path, headers] of untrusted) {
      const parent = sampledParent();
      const answer = await fetch(`${url}${path}`, {
        method,
        headers: { ...headers, traceparent: `00-${parent.traceId}-${parent.spanId}-01` },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      await answer.arrayBuffer();
      // A root of our own, which our sampler (ratio 0) left unrecorded.
      expect([path, answer.headers.get('traceresponse')]).toEqual([
        path,
        expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/),
      ]);
      expect(answer.headers.get('traceresponse')).not.toContain(parent.traceId);
      refused.push(parent.traceId);
    }

    for (const token of [TEST_TOKEN, OPERATOR_TOKEN]) {
      const parent = sampledParent();
      const path = token === TEST_TOKEN ? unknownJob : '/v1/operator/webhooks';
      const answer = await fetch(`${url}${path}`, {
        headers: {
          authorization: `Bearer ${token}`,
          traceparent: `00-${parent.traceId}-${parent.spanId}-01`,
        },
      });
      await answer.arrayBuffer();
      expect(answer.headers.get('traceresponse')).toMatch(
        new RegExp(`^00-${parent.traceId}-[0-9a-f]{16}-01$`),
      );
      const serverSpanId = answer.headers.get('traceresponse')!.split('-')[2];
      const found = await eventually(
        () => traceOf(parent.traceId),
        (t) => t?.spans.some((s) => s.spanID === serverSpanId) ?? false,
      );
      expect(found!.spans.find((s) => s.spanID === serverSpanId)!.references).toEqual([
        expect.objectContaining({ refType: 'CHILD_OF', spanID: parent.spanId }),
      ]);
    }
    // The trusted requests' spans, ended after the refused ones, have arrived: so would theirs.
    for (const traceId of refused) expect(await traceOf(traceId)).toBeUndefined();
  });
});

test("a caller's baggage is never taken in, even when OTEL_PROPAGATORS names it: an owner's traced create hands its workflow the trace and no baggage, and no span carries it", async () => {
  await withUnsampledApi(async (url) => {
    const parent = sampledParent();
    const secret = randomBytes(8).toString('hex');
    const created = await fetch(`${url}/v1/jobs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEST_TOKEN}`,
        'content-type': 'application/json',
        'idempotency-key': freshKey('traced-baggage'),
        traceparent: `00-${parent.traceId}-${parent.spanId}-01`,
        baggage: `onejob.owner=mallory,secret=${secret}`,
      },
      body: JSON.stringify({ type: 'summarize', input: { text: 'Baggage stays at the door.' } }),
    });
    expect(created.status).toBe(201);
    const { id, workflowId } = (await created.json()) as { id: string; workflowId: string };
    await untilJob(stack, id, succeeded);

    const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const carried = defaultPayloadConverter.fromPayload<Record<string, string>>(
      started!.header!.fields![TRACE_HEADER]!,
    );
    expect(Object.keys(carried)).not.toContain('baggage');
    expect(carried.traceparent).toContain(parent.traceId);

    const found = await eventually(
      () => traceOf(parent.traceId),
      (t) => t?.spans.some((s) => s.operationName === 'provider call') ?? false,
    );
    expect(JSON.stringify(found)).not.toContain(secret);
  });
});
