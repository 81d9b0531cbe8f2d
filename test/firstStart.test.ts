import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DEV_TOKEN } from '../src/domain/publishedSecrets';
import { findGo } from '../tools/stack/goInstall';
import { freePort } from '../tools/stack/processes';
import { TEMPORAL_CLI_VERSION } from '../tools/stack/temporalCli';
import { runBuiltCli } from './support/cli';
import { exitOf, runDevStart, untilRunning, type StartedStack } from './support/devStart';
import { harness, ROOT, TEST_OUTPUT } from './support/harness';
import { eventually } from './support/polling';
import { processesMentioning, waitUntil } from './support/processScan';

/**
 * A newcomer's first `npm start`: a state folder that has never been used, and a per-user cache
 * that holds the temporal CLI and nothing else (no Jaeger). The stack must serve before anything
 * that only adds a view is built, and every address its banner prints must answer with what
 * its label says.
 */
const stateDir = mkdtempSync(path.join(TEST_OUTPUT, 'first-start-'));
const cacheHome = mkdtempSync(path.join(TEST_OUTPUT, 'first-start-cache-'));
const databaseName = `onejob_firststart_${Date.now()}`;

/** Go's build cache follows XDG_CACHE_HOME by default: the test keeps the machine's own. */
function goBuildCache(): string {
  const go = findGo();
  if (!go) throw new Error('Go is needed to build Jaeger');
  return execFileSync(go, ['env', 'GOCACHE'], { encoding: 'utf8' }).trim();
}

async function stackEnv(): Promise<NodeJS.ProcessEnv> {
  const cli = path.join(cacheHome, 'onejob', 'temporal-cli', `v${TEMPORAL_CLI_VERSION}`);
  mkdirSync(cli, { recursive: true });
  symlinkSync(harness().temporalCliPath, path.join(cli, 'temporal'));
  const [api, temporal, ui, simulator, metrics, health, query, otlp] = await Promise.all(
    Array.from({ length: 8 }, () => freePort()),
  );
  return {
    XDG_CACHE_HOME: cacheHome,
    GOCACHE: goBuildCache(),
    TEMPORAL_CLI_PATH: undefined,
    JAEGER_PATH: undefined,
    ONEJOB_TRACE_UI: undefined,
    OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
    DATABASE_URL: undefined,
    TEMPORAL_ADDRESS: undefined,
    // The machine's PostgreSQL, found the way npm start looks for a local server.
    ONEJOB_LOCAL_POSTGRES_URL: harness().adminDatabaseUrl,
    ONEJOB_DATABASE_NAME: databaseName,
    ONEJOB_STATE_DIR: stateDir,
    PORT: String(api),
    TEMPORAL_PORT: String(temporal),
    TEMPORAL_UI_PORT: String(ui),
    SIMULATOR_PORT: String(simulator),
    ONEJOB_WORKER_METRICS_ADDRESS: `127.0.0.1:${metrics}`,
    ONEJOB_WORKER_HEALTH_ADDRESS: `127.0.0.1:${health}`,
    JAEGER_QUERY_PORT: String(query),
    JAEGER_OTLP_PORT: String(otlp),
  };
}

/** The banner: from "onejob is running" to "Try it:". */
function bannerOf(output: string): string[] {
  const from = output.indexOf('onejob is running');
  return output.slice(from, output.indexOf('Try it:', from)).split('\n');
}

const bearer = { authorization: `Bearer ${DEV_TOKEN}` };

async function answersJson(url: string, init: RequestInit = {}): Promise<string> {
  const answer = await fetch(url, init);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  return JSON.stringify(await answer.json());
}

async function pageTitled(url: string, title: RegExp): Promise<string> {
  const answer = await fetch(url);
  expect(answer.status).toBe(200);
  const page = await answer.text();
  expect(/<title>([^<]*)<\/title>/i.exec(page)?.[1]).toMatch(title);
  return 'a page';
}

/**
 * The Temporal Web UI, assets and all: its page names its scripts (it sets its title from
 * them), the first of which is served, and its server answers the UI's own settings call.
 */
async function temporalWebUi(url: string): Promise<void> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const script = /href="(\/_app\/immutable\/[^"]+\.js)"/.exec(await page.text())?.[1];
  expect(script).toBeDefined();
  const asset = await fetch(`${url}${script}`);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toMatch(/javascript/);
  expect(await answersJson(`${url}/api/v1/settings`)).toContain('"DefaultNamespace"');
}

/** What each banner label promises, checked on the address printed beside it. */
const CHECKS: Array<{ label: RegExp; check: (url: string) => Promise<unknown> }> = [
  {
    label: /^API\b/,
    check: async (url) => expect(await answersJson(url, { headers: bearer })).toContain('"jobs"'),
  },
  { label: /^reference\b/, check: (url) => pageTitled(url, /swagger/i) },
  { label: /^Temporal Web UI\b/, check: (url) => temporalWebUi(url) },
  {
    label: /^Simulator\b/,
    check: async (url) => expect(await answersJson(url)).toContain('"requests"'),
  },
  {
    label: /^query API\b/,
    check: async (url) => expect(await answersJson(url)).toContain('"data"'),
  },
  {
    // An empty OTLP export (protobuf): a receiver takes it.
    label: /^OTLP in\b/,
    check: async (url) => {
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: new Uint8Array(),
      });
      expect(answer.status).toBe(200);
    },
  },
  {
    label: /^Metrics\b/,
    check: async (url) => {
      const answer = await fetch(url);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await answer.text()).toMatch(/^# HELP /m);
    },
  },
  { label: /^Readiness\b/, check: (url) => answersJson(url) },
];

/** Checks every http address of the banner by its line's label; an unchecked one fails. */
async function checkBannerAddresses(banner: string[]): Promise<string[]> {
  const checked: string[] = [];
  for (const line of banner) {
    const label = line.trim();
    for (const [url] of line.matchAll(/https?:\/\/[^\s),]+/g)) {
      const rule = CHECKS.find((c) => c.label.test(label));
      if (!rule)
        throw new Error(`the banner prints ${url} with no check of what it is: "${label}"`);
      try {
        await rule.check(url);
      } catch (error) {
        throw new Error(`${url} ("${label}") does not answer as its label says: ${String(error)}`);
      }
      checked.push(url);
    }
  }
  return checked;
}

/** The banner's other two addresses, which are not HTTP: Temporal's gRPC and PostgreSQL. */
async function checkServerAddresses(banner: string[]): Promise<void> {
  const grpc = /Temporal gRPC\s+(\S+)/.exec(banner.join('\n'))?.[1];
  const connection = await Connection.connect({ address: grpc! });
  try {
    await new Client({ connection }).workflowService.getSystemInfo({});
  } finally {
    await connection.close();
  }
  const postgres = /PostgreSQL\s+(postgres\S+)/.exec(banner.join('\n'))?.[1];
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  try {
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await client.end();
  }
}

/**
 * The README's table of what npm start runs, its addresses moved to this stack's ports: each must
 * be one the banner prints (and so one checked above).
 */
function readmeAddresses(env: NodeJS.ProcessEnv): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## What `npm start` runs'));
  const rows = table.slice(0, table.indexOf('\n\n', table.indexOf('| what'))).split('\n');
  const portOf: Record<string, string | undefined> = {
    '3000': env.PORT,
    '8233': env.TEMPORAL_UI_PORT,
    '4010': env.SIMULATOR_PORT,
    '9464': env.ONEJOB_WORKER_METRICS_ADDRESS?.split(':')[1],
    '16686': env.JAEGER_QUERY_PORT,
    '4318': env.JAEGER_OTLP_PORT,
  };
  return rows.flatMap((row) =>
    [...row.matchAll(/https?:\/\/127\.0\.0\.1:(\d+)([^\s,)]*)/g)].map(
      ([, port, rest]) => `http://127.0.0.1:${portOf[port!] ?? `unknown-port-${port}`}${rest}`,
    ),
  );
}

async function stopStack(stack: StartedStack): Promise<void> {
  process.kill(-stack.process.pid!, 'SIGINT');
  expect(await exitOf(stack)).toEqual({ code: 0 });
}

/** Nothing of ours, the background build included (its files are in the cache), runs on. */
async function nothingLeft(): Promise<void> {
  const left = () => [...processesMentioning(stateDir), ...processesMentioning(cacheHome)];
  expect((await waitUntil(() => left().length === 0, 30_000)) ? [] : left()).toEqual([]);
}

afterAll(async () => {
  for (const { pid } of [...processesMentioning(stateDir), ...processesMentioning(cacheHome)])
    process.kill(pid, 'SIGKILL');
  const admin = new pg.Client({ connectionString: harness().adminDatabaseUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.end();
});

test('a first npm start serves before the trace backend is built, and every address its banner prints answers as its label says', async () => {
  const env = await stackEnv();
  const began = Date.now();
  let stack = runDevStart(env);
  await untilRunning(stack);
  const served = Date.now() - began;
  const output = stack.output();
  expect(output).toContain(`(${path.join(cacheHome, 'onejob', 'temporal-cli')}`);
  expect(output).toContain('from cache');
  // The order of events: the stack served, then (and only then) the trace backend's build began.
  expect(await waitUntil(() => stack.output().includes('building Jaeger'), 30_000)).toBe(true);
  const running = stack.output().indexOf('onejob is running');
  expect(stack.output().indexOf('building Jaeger')).toBeGreaterThan(running);
  expect(stack.output().lastIndexOf('Jaeger', running)).toBe(-1);
  console.log(`first start (CLI cached, no Jaeger): the API answered after ${served} ms`);

  const banner = bannerOf(output);
  expect(banner.join('\n')).toContain('Jaeger is built in the background');
  expect(banner.join('\n')).not.toMatch(/trace UI/i);
  const checked = await checkBannerAddresses(banner);
  expect(checked.length).toBeGreaterThanOrEqual(8);
  await checkServerAddresses(banner);

  // Ctrl-C while Jaeger may still be building: everything stops, the build with it, and a build
  // stopped that way is not reported as one that failed.
  await stopStack(stack);
  await nothingLeft();
  expect(stack.output()).not.toContain('could not be built');

  // The next start finds Jaeger built (if the build had ended) or builds it again, behind a
  // stack that serves. Either way, a job's trace ends up in Jaeger's query API.
  stack = runDevStart(env);
  try {
    await untilRunning(stack);
    const api = /API\s+(http\S+)\/v1\/jobs/.exec(stack.output())![1]!;
    const created = await fetch(`${api}/v1/jobs`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', 'idempotency-key': 'first-start' },
      body: JSON.stringify({ type: 'summarize', input: { text: 'Served first. Traced later.' } }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const traceId = /^00-([0-9a-f]{32})-/.exec(created.headers.get('traceresponse') ?? '')?.[1];
    expect(traceId).toBeDefined();
    // Jaeger runs (its query API printed), or says why it cannot.
    const jaegerSettled = /query API\s+http|Jaeger could not/;
    await waitUntil(() => jaegerSettled.test(stack.output()), 600_000, 1_000);
    expect(stack.output()).toMatch(/query API\s+http\S+\/api\/services/);
    const query = /query API\s+(http\S+)\/api\/services/.exec(stack.output())![1];
    // Held while Jaeger built, or sent to it straight: the create's span is in it.
    const trace = await eventually(
      async () => (await fetch(`${query}/api/traces/${traceId}`)).status,
      (status) => status === 200,
    );
    expect(trace).toBe(200);
    // `npx onejob jobs trace <id>`, as the banner says, finds that Jaeger with only the state
    // folder to go on (npm start's traces.json).
    const { stdout: tree } = await eventually(
      () =>
        runBuiltCli(['jobs', 'trace', id], {
          ONEJOB_STATE_DIR: stateDir,
          ONEJOB_TRACE_QUERY_URL: undefined,
        }),
      (run) => run.stdout.includes('provider call'),
    );
    expect(tree).toMatch(new RegExp(`^trace ${traceId} {2}`, 'm'));
    expect(tree).toMatch(/^POST \/v1\/jobs {2}/m);
    await checkBannerAddresses(bannerOf(stack.output()));
    // Every address the README's table names is one a banner printed.
    const printed = `${output}\n${stack.output()}`;
    for (const address of readmeAddresses(env)) expect(printed).toContain(address);
  } finally {
    await stopStack(stack);
  }
  await nothingLeft();
}, 900_000);
