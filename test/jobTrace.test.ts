import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTraceQueryRecord } from '../src/cli/traceQueryRecord';
import type { JaegerTrace } from '../src/cli/traceTree';
import type { TokenPrice } from '../src/providers/provider';
import { startJaeger, type Jaeger } from '../tools/stack/jaeger';
import { freePort } from '../tools/stack/processes';
import { runCli } from './support/cli';
import { jaegerBinary, TEST_OUTPUT } from './support/harness';
import { freshKey, succeeded, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';

const PRICE: TokenPrice = { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 };

/**
 * `onejob jobs trace <job id>` reads a job's traces from the trace backend's own query API (a
 * real Jaeger here, fed by the real API and worker) and prints them as a tree.
 */
let jaeger: Jaeger;
let stack: TestStack;
/** A state folder with no npm start in it: the CLI must not find the developer's. */
let emptyState: string;
beforeAll(async () => {
  jaeger = await startJaeger({
    binary: jaegerBinary(),
    dir: path.join(TEST_OUTPUT, `jaeger-trace-cli-${process.pid}`),
  });
  stack = await startTestStack({
    // Its own process, so that it traces as the API does.
    workerProcess: true,
    providers: (url) => [
      chatProvider(url, 'primary', 'sim-steady', { price: PRICE }),
      chatProvider(url, 'slow', 'sim-backup'),
    ],
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      // Spans leave within a tenth of a second, not the default five.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
  emptyState = stateFolder();
});
afterAll(async () => {
  await stack?.stop();
  await jaeger?.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const folders: string[] = [];
/** A state folder of the test's own, removed at the end. */
function stateFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'onejob-trace-state-'));
  folders.push(folder);
  return folder;
}

const traceCli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(stack, ['jobs', 'trace', ...args], {
    ONEJOB_STATE_DIR: emptyState,
    ONEJOB_TRACE_QUERY_URL: jaeger.queryUrl,
    ...env,
  });

/** The trace as Jaeger's query API has it so far (none until its first span arrives). */
async function traceOf(traceId: string): Promise<JaegerTrace | undefined> {
  const response = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
  if (response.status === 404) return undefined;
  return ((await response.json()) as { data: JaegerTrace[] }).data[0];
}

/** The names of a span's ancestors in the trace, nearest first. */
function ancestorNames(trace: JaegerTrace, spanId: string): string[] {
  const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
  const names: string[] = [];
  let parent = byId.get(byId.get(spanId)?.references?.[0]?.spanID ?? '');
  for (; parent; parent = byId.get(parent.references?.[0]?.spanID ?? ''))
    names.push(parent.operationName);
  return names;
}

/** A printed span: its depth (two spaces a level), its name, and the rest of its line. */
interface Line {
  depth: number;
  name: string;
  rest: string;
}
function treeLines(output: string): Line[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('trace '))
    .map((line) => {
      const indent = line.length - line.trimStart().length;
      const [name = '', ...rest] = line.trimStart().split('  ');
      return { depth: indent / 2, name, rest: rest.join('  ') };
    });
}
/** The names a printed span hangs under, nearest first: read off the indentation alone. */
function printedAncestors(lines: Line[], index: number): string[] {
  const names: string[] = [];
  let depth = lines[index]!.depth;
  for (let i = index - 1; i >= 0 && depth > 0; i--) {
    if (lines[i]!.depth === depth - 1) {
      names.push(lines[i]!.name);
      depth -= 1;
    }
  }
  return names;
}

test("a job's trace prints as a tree: the create request at its root, the provider call under the workflow's activity with its provider, attempt, outcome and cost, and its compare-and-swap won under the call; reads of the job (a client's polling) are not among them", async () => {
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('trace-cli') },
    body: {
      type: 'summarize',
      input: { text: 'Trace me. Then print the tree.' },
      providers: ['primary'],
    },
  });
  expect(created.status).toBe(201);
  const [, traceId] = created.headers.get('traceresponse')!.split('-');
  const { id } = (await created.json()) as { id: string };
  await untilJob(stack, id, succeeded);
  const read = await stack.request('GET', `/v1/jobs/${id}`);
  const [, readTraceId] = read.headers.get('traceresponse')!.split('-');

  // Spans leave in batches: wait until the call and its swap have arrived, chained up to the
  // create, and the read's server span too.
  const named = (t: JaegerTrace, name: string) => t.spans.filter((s) => s.operationName === name);
  await eventually(
    async () => ({ job: await traceOf(traceId!), read: await traceOf(readTraceId!) }),
    ({ job, read }) =>
      job !== undefined &&
      named(job, 'provider call').length === 1 &&
      named(job, 'compare-and-swap').length === 1 &&
      ancestorNames(job, named(job, 'compare-and-swap')[0]!.spanID).at(-1) === 'POST /v1/jobs' &&
      (read?.spans.some((s) => s.operationName === 'GET /v1/jobs/:id') ?? false),
  );

  const printed = await traceCli([id]);
  expect([printed.code, printed.stderr]).toEqual([0, '']);
  // Each trace has its header: id, spans, duration, start.
  expect(printed.stdout).toMatch(
    new RegExp(
      `^trace ${traceId}  \\d+ spans  \\d+\\.\\d ms  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`,
      'm',
    ),
  );
  // The read reached Jaeger (waited for above), but a poll is not part of the job's story.
  expect(printed.stdout).not.toMatch(new RegExp(`^trace ${readTraceId}  `, 'm'));
  // The job's trace comes first: it started first.
  expect(printed.stdout.startsWith(`trace ${traceId}  `)).toBe(true);

  const lines = treeLines(printed.stdout);
  const create = lines.find((l) => l.name === 'POST /v1/jobs')!;
  expect(create.depth).toBe(0);
  expect(create.rest).toMatch(/^\d+\.\d ms {2}onejob-api/);
  const callAt = lines.findIndex((l) => l.name === 'provider call');
  expect(lines[callAt]!.rest).toMatch(
    new RegExp(
      `^\\d+\\.\\d ms  onejob-worker  provider=primary model=sim-steady attempt=${id}:1 outcome=succeeded cost=[\\d.e-]+ USD$`,
    ),
  );
  expect(printedAncestors(lines, callAt)).toEqual([
    'RunActivity:callProvider',
    'StartActivity:callProvider',
    'RunWorkflow:jobWorkflow',
    'StartWorkflow:jobWorkflow',
    'POST /v1/jobs',
  ]);
  const swapAt = lines.findIndex((l) => l.name === 'compare-and-swap');
  expect(lines[swapAt]!.rest).toMatch(
    new RegExp(`onejob-worker  attempt=${id}:1 cas=won source=provider$`),
  );
  expect(printedAncestors(lines, swapAt)[0]).toBe('provider call');
  expect(lines.some((l) => l.name === 'GET /v1/jobs/:id')).toBe(false);

  // --json: the traces as Jaeger answered them.
  const json = await traceCli([id, '--json']);
  const traces = JSON.parse(json.stdout) as JaegerTrace[];
  expect(traces[0]!.traceID).toBe(traceId);
  expect(traces.map((t) => t.traceID)).not.toContain(readTraceId);
  const callTags = named(traces[0]!, 'provider call')[0]!.tags ?? [];
  expect(callTags).toContainEqual(
    expect.objectContaining({ key: 'onejob.provider', value: 'primary' }),
  );
  // Beside ours, the OpenTelemetry GenAI attributes: the model, and the usage the provider reported.
  const { attempts } = (await read.json()) as {
    attempts: Array<{
      usage: { inputTokens: number; cachedInputTokens: number; outputTokens: number };
    }>;
  };
  const { usage } = attempts[0]!;
  for (const [key, value] of [
    ['gen_ai.request.model', 'sim-steady'],
    ['gen_ai.usage.input_tokens', usage.inputTokens],
    ['gen_ai.usage.output_tokens', usage.outputTokens],
    ['gen_ai.usage.cache_read.input_tokens', usage.cachedInputTokens],
  ] as const)
    expect(callTags).toContainEqual(expect.objectContaining({ key, value }));
  // Its server reports no cache writes: the count is left out, never taken for zero.
  expect(callTags.map((t) => t.key)).not.toContain('gen_ai.usage.cache_creation.input_tokens');

  // Without ONEJOB_TRACE_QUERY_URL, the CLI reads where a running npm start recorded its Jaeger
  // (a user and password in the URL go as basic auth, which this Jaeger ignores).
  const state = stateFolder();
  const withUser = new URL(jaeger.queryUrl);
  [withUser.username, withUser.password] = ['reader', 's3cret'];
  writeTraceQueryRecord(state, { queryUrl: withUser.toString(), pid: process.pid });
  const fromRecord = await traceCli([id], {
    ONEJOB_TRACE_QUERY_URL: '',
    ONEJOB_STATE_DIR: state,
  });
  expect(fromRecord.code).toBe(0);
  expect(fromRecord.stdout).toMatch(new RegExp(`^trace ${traceId}  `, 'm'));
});

test('a job whose worker has not traced anything yet is found by its create request alone', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-backup',
    fault: { kind: 'hold', gate: 'trace-cli-held' },
  });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('trace-cli-held') },
    body: { type: 'summarize', input: { text: 'Held at the provider.' }, providers: ['slow'] },
  });
  expect(created.status).toBe(201);
  const [, traceId] = created.headers.get('traceresponse')!.split('-');
  const { id } = (await created.json()) as { id: string };
  try {
    // The call is held: nothing tagged with the job has ended in the worker. The create's span
    // carries the job's id.
    await eventually(
      () => traceOf(traceId!),
      (t) => t?.spans.some((s) => s.operationName === 'POST /v1/jobs') ?? false,
    );
    const printed = await traceCli([id]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).not.toContain('provider call');
    expect(treeLines(printed.stdout).find((l) => l.name === 'POST /v1/jobs')?.depth).toBe(0);
  } finally {
    stack.simulator.openGate('trace-cli-held');
  }
  await untilJob(stack, id, succeeded);
});

test('what keeps the CLI from a trace is one line: a job id that is not one (before any request), no query API configured, one that is no http(s) URL, a stale record, a query API that does not answer, one that is not Jaeger, and a job with no trace', async () => {
  const closedPort = await freePort();
  const nobody = `http://reader:s3cret@127.0.0.1:${closedPort}`;
  const oneLine = (result: { code: number | null; stderr: string }) => {
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toContain('s3cret');
    return result.stderr.trim();
  };

  // Refused before any request: the query API named would not answer, and the error is the id's.
  expect(oneLine(await traceCli(['not-a-job'], { ONEJOB_TRACE_QUERY_URL: nobody }))).toBe(
    'onejob: not-a-job is not a job id (a UUID)',
  );

  const job = randomUUID();
  expect(oneLine(await traceCli([job], { ONEJOB_TRACE_QUERY_URL: '' }))).toMatch(
    /^onejob: no trace query API: set ONEJOB_TRACE_QUERY_URL to a Jaeger query API .*, or run npm start, which runs Jaeger/,
  );

  expect(oneLine(await traceCli([job], { ONEJOB_TRACE_QUERY_URL: '127.0.0.1:16686' }))).toBe(
    'onejob: ONEJOB_TRACE_QUERY_URL holds no http(s) URL; give the base URL of a Jaeger query API (e.g. http://127.0.0.1:16686)',
  );

  // A record whose npm start is gone.
  const exited = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => exited.once('exit', resolve));
  const stale = stateFolder();
  writeTraceQueryRecord(stale, { queryUrl: jaeger.queryUrl, pid: exited.pid! });
  expect(
    oneLine(await traceCli([job], { ONEJOB_TRACE_QUERY_URL: '', ONEJOB_STATE_DIR: stale })),
  ).toMatch(/traces\.json is stale: the npm start that wrote it \(pid \d+\) is not running/);

  expect(oneLine(await traceCli([job], { ONEJOB_TRACE_QUERY_URL: nobody }))).toBe(
    `onejob: cannot reach the trace query API at http://127.0.0.1:${closedPort} (ONEJOB_TRACE_QUERY_URL) for job ${job}: ECONNREFUSED; check that Jaeger runs there and its query port is this one`,
  );

  // The API is no Jaeger: it has no /api/services.
  expect(oneLine(await traceCli([job], { ONEJOB_TRACE_QUERY_URL: stack.apiUrl }))).toMatch(
    new RegExp(
      `^onejob: the trace query API at ${stack.apiUrl} \\(ONEJOB_TRACE_QUERY_URL\\) answered HTTP 404 to /api/services for job ${job}; check that the URL is Jaeger's query base URL`,
    ),
  );

  expect(oneLine(await traceCli([job]))).toMatch(
    new RegExp(
      `^onejob: no trace of job ${job} at ${jaeger.queryUrl} \\(ONEJOB_TRACE_QUERY_URL\\) in the last 7 days \\(searched [^)]*onejob-api[^)]*\\); check that the API and the worker send their spans there`,
    ),
  );
});
