import { liveStartRecord } from './startRecord';
import { stateFolder } from './stateFolder';
import { readTraceQueryRecord, traceQueryRecordFile } from './traceQueryRecord';
import { traceSpan, type JaegerTrace } from './traceTree';

/**
 * Where `onejob jobs trace` reads traces: Jaeger's HTTP query API, at ONEJOB_TRACE_QUERY_URL,
 * else where the running `npm start` recorded its Jaeger.
 */
export interface TraceQueryChoice {
  url: string;
  /** Where the URL came from, for messages. */
  from: string;
}

export function chooseTraceQuery(env: NodeJS.ProcessEnv = process.env): TraceQueryChoice {
  if (env.ONEJOB_TRACE_QUERY_URL)
    return { url: env.ONEJOB_TRACE_QUERY_URL, from: 'ONEJOB_TRACE_QUERY_URL' };
  const stateDir = stateFolder(env);
  const file = traceQueryRecordFile(stateDir);
  const record = readTraceQueryRecord(stateDir);
  if (!record)
    throw new Error(
      `no trace query API: set ONEJOB_TRACE_QUERY_URL to a Jaeger query API (e.g. http://127.0.0.1:16686), or run npm start, which runs Jaeger (none has recorded one in ${stateDir})`,
    );
  return { url: liveStartRecord(file, record, 'ONEJOB_TRACE_QUERY_URL').queryUrl, from: file };
}

/** The URL fit to print: no user, password, query or fragment. */
export function printableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(not a URL)';
  }
}

/** How far back, and how many traces per service, a search for a job's traces goes. */
export interface TraceSearch {
  lookbackDays: number;
  limitPerService: number;
}

export interface JobTraces {
  traces: JaegerTrace[];
  /** Services whose search came back full: older traces of the job may be left out. */
  fullServices: string[];
}

const REQUEST_TIMEOUT_MS = 15_000;

/** What a failed request to the query API says, in a few words. */
function failureText(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if ((error as Error).name === 'TimeoutError')
    return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/**
 * A job's traces from Jaeger: each service it knows is searched for spans tagged with the job
 * (`onejob.job_id`: the API's request that created or acted on it, the worker's calls, lookups and
 * compare-and-swaps, the reconciler's rounds), and the traces found are joined by id.
 */
export async function findJobTraces(
  choice: TraceQueryChoice,
  jobId: string,
  search: TraceSearch,
): Promise<JobTraces> {
  let base: URL | undefined;
  try {
    base = new URL(choice.url);
  } catch {
    base = undefined;
  }
  // Not printed: a URL that does not parse may still hold a password.
  if (!base || (base.protocol !== 'http:' && base.protocol !== 'https:'))
    throw new Error(
      `${choice.from} holds no http(s) URL; give the base URL of a Jaeger query API (e.g. http://127.0.0.1:16686)`,
    );
  // fetch refuses a URL with credentials in it: they go in the Authorization header instead.
  const headers: Record<string, string> = { accept: 'application/json' };
  if (base.username || base.password) {
    const user = decodeURIComponent(base.username);
    const password = decodeURIComponent(base.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    base.username = '';
    base.password = '';
  }
  const where = `${printableUrl(choice.url)} (${choice.from})`;
  const endpoint = (path: string, query: Record<string, string> = {}): URL => {
    const url = new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url;
  };
  const get = async (url: URL): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw new Error(
        `cannot reach the trace query API at ${where} for job ${jobId}: ${failureText(error)}; check that Jaeger runs there and its query port is this one`,
      );
    }
    const text = await response.text();
    if (!response.ok)
      throw new Error(
        `the trace query API at ${where} answered HTTP ${response.status} to ${url.pathname} for job ${jobId}; check that the URL is Jaeger's query base URL (e.g. http://127.0.0.1:16686)`,
      );
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw notJaeger(url.pathname);
    }
  };
  const notJaeger = (path: string): Error =>
    new Error(
      `${where} did not answer ${path} as Jaeger's query API does (for job ${jobId}); set ONEJOB_TRACE_QUERY_URL to Jaeger's query base URL (e.g. http://127.0.0.1:16686)`,
    );

  const listed = (await get(endpoint('/api/services'))) as { data?: unknown };
  const services = listed?.data ?? null;
  if (
    services !== null &&
    !(Array.isArray(services) && services.every((s) => typeof s === 'string'))
  )
    throw notJaeger('/api/services');

  const end = Date.now() * 1000;
  const start = end - search.lookbackDays * 24 * 3_600_000_000;
  const found = new Map<string, JaegerTrace>();
  const fullServices: string[] = [];
  for (const service of (services ?? []) as string[]) {
    const answer = (await get(
      endpoint('/api/traces', {
        service,
        tags: JSON.stringify({ 'onejob.job_id': jobId }),
        start: String(start),
        end: String(end),
        limit: String(search.limitPerService),
      }),
    )) as { data?: unknown };
    if (!Array.isArray(answer?.data) && answer?.data !== null) throw notJaeger('/api/traces');
    const traces = (answer.data ?? []) as unknown[];
    if (!traces.every(isJaegerTrace)) throw notJaeger('/api/traces');
    if (traces.length >= search.limitPerService) fullServices.push(service);
    // The same trace through another service: the later answer may hold spans that arrived since.
    for (const trace of traces) {
      const known = found.get(trace.traceID);
      if (!known || trace.spans.length > known.spans.length) found.set(trace.traceID, trace);
    }
  }
  if (found.size === 0)
    throw new Error(
      `no trace of job ${jobId} at ${where} in the last ${search.lookbackDays} days (searched ${services?.length ? (services as string[]).join(', ') : 'no services: nothing has sent it spans'}); check that the API and the worker send their spans there (OTEL_EXPORTER_OTLP_ENDPOINT), and that the job id is right`,
    );
  const traces = [...found.values()].sort((a, b) => traceSpan(a).start - traceSpan(b).start);
  return { traces, fullServices };
}

/** Just enough of a trace's shape to render it without tripping over it. */
function isJaegerTrace(value: unknown): value is JaegerTrace {
  const trace = value as Partial<JaegerTrace> | null;
  return (
    typeof trace === 'object' &&
    trace !== null &&
    typeof trace.traceID === 'string' &&
    Array.isArray(trace.spans) &&
    typeof trace.processes === 'object' &&
    trace.processes !== null &&
    trace.spans.every(
      (span) =>
        typeof span === 'object' &&
        span !== null &&
        typeof span.spanID === 'string' &&
        typeof span.operationName === 'string' &&
        typeof span.startTime === 'number' &&
        typeof span.duration === 'number',
    )
  );
}
