import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { obtainSpin } from '../modelCheck/spin';
import { CHROMIUM, NGINX, obtainDebianProgram, PG_DUMP, PROMTOOL } from './debianPackages';
import { obtainJaeger } from './jaeger';
import { describeCpu, sampleCpu } from './machineCpu';
import { resolveDatabase, startEmbeddedPostgres, type ResolvedDatabase } from './postgres';
import { obtainTemporalCli } from './temporalCli';
import { obtainTemporalClusterBinaries } from './temporalClusterBinaries';
import {
  TEMPORAL_ENGINE_VARIABLE,
  temporalEngineKind,
  type TemporalEngineKind,
} from './temporalEngine';

/**
 * `npm test`: the suite on the dev server, but for the engine-sensitive tests (those in
 * test/engines/), which run on the production engine, the Temporal server on PostgreSQL.
 * Arguments go to every jest run (`npm test -- test/engines/hedging.test.ts` runs that file on
 * both engines); ONEJOB_TEMPORAL_ENGINE=dev or =cluster runs one engine only (the dev server then
 * runs test/engines/ too, but for what only the production engine can do: workflow pause). `npm run test:long` (`--long`) runs the exploring tests (campaign,
 * model-based runs, SPIN, fuzzer) at full length, and the engine-sensitive tests, on the dev
 * server.
 *
 * The dev server's files run in two parts: the heavy ones (they start many processes or keep a
 * core busy, and time their own traffic) one at a time and alone, then the rest three at a time
 * (ONEJOB_TEST_WORKERS), since those mostly wait on servers, beside the production engine's part
 * (ONEJOB_TEST_CLUSTER_WORKERS at a time). ONEJOB_TEST_LANES says how parts share the machine
 * (see laneSharing).
 *
 * What the parts need is obtained once, first: the Temporal programs and Jaeger (Go builds on a
 * fresh machine), Debian's programs (apt holds one lock) and PostgreSQL. The production engine's part
 * gets an embedded PostgreSQL server of its own: the Temporal server keeps about forty
 * connections open, and beside the dev server's files one server's default hundred can run
 * out. At the end every test file's time is printed, slowest first, so a slowdown shows in
 * every CI log.
 */
const ROOT = PACKAGE_ROOT;
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const RESULTS_DIR = path.join(ROOT, 'test-output', 'results');
const LENGTH_VARIABLE = 'ONEJOB_TEST_LENGTH';
/** The tests that explore (random traffic, generated scenarios): what `--long` lengthens. */
const EXPLORING_TESTS = [
  'test/engines/faultCampaign.test.ts',
  'test/faultCampaignPlantedBugs.test.ts',
  'test/modelBased.test.ts',
  'test/modelBasedPlantedBugs.test.ts',
  'test/httpFuzz.test.ts',
  'test/protocolModel.test.ts',
];
/**
 * The files that must have the machine to themselves: the exploring ones (campaigns start
 * whole stacks, SPIN keeps a core busy) and the benchmark smoke, which measures.
 */
const HEAVY_TESTS = [...EXPLORING_TESTS, 'test/benchmarkSmoke.test.ts'];
/**
 * The engine-sensitive files (jest.config.js): in `npm test` they run on the production engine
 * only, which is what they are for; every other file runs on the dev server. The dev server
 * runs them too when it is the run's only engine (`ONEJOB_TEMPORAL_ENGINE=dev npm test`).
 */
const ENGINE_TESTS = 'test/engines/';
/** Of the production engine's files, the one that must have the machine to itself: its campaign. */
const CLUSTER_HEAVY_TESTS = ['test/engines/faultCampaign.test.ts'];
/**
 * What only the production engine can do: the dev server is the CLI's (Temporal 1.29), which
 * has no workflow pause (1.30+). The dev server never runs these, even when it runs the rest of
 * test/engines/.
 */
const PRODUCTION_ENGINE_ONLY_TESTS = [
  'test/engines/temporalPause.test.ts',
  'test/engines/temporalPauseStuck.test.ts',
];

/** One jest run: an engine, which of its files, how many at once. */
interface Part {
  name: string;
  engine: TemporalEngineKind;
  /** Test files at once (jest workers). */
  workers: number;
  /** Jest arguments that choose the files (besides the caller's). */
  select: string[];
  /** Its files must have the machine to themselves (see laneSharing). */
  heavy?: true;
}

function log(line: string): void {
  console.log(`[npm test] ${line}`);
}

function wholeNumber(variable: string, fallback: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${variable} must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
  return value;
}

/**
 * How the parts share the machine (ONEJOB_TEST_LANES): `heavy-alone` (the default) runs the heavy
 * part alone, then the dev server's other files beside the production engine's, which mostly
 * wait on servers and leave a core idle (0.8 of two cores on average); `one-after-another` runs
 * each part alone; `together` starts them all at once, for machines with more cores. The heavy
 * files time their own traffic or keep a core busy: beside the others on two cores they starved
 * the time-sensitive tests. The files beside each other give providers that must answer a
 * timeout no healthy call reaches on a busy machine (test/support/providers.ts).
 */
function laneSharing(): 'heavy-alone' | 'one-after-another' | 'together' {
  const raw = process.env.ONEJOB_TEST_LANES;
  if (raw === undefined || raw === '') return 'heavy-alone';
  if (raw === 'heavy-alone' || raw === 'one-after-another' || raw === 'together') return raw;
  throw new Error(
    `ONEJOB_TEST_LANES must be heavy-alone, one-after-another or together, not ${JSON.stringify(raw)}`,
  );
}

/** The parts grouped into steps: the parts of a step run at once, the steps one after another. */
function steps(parts: Part[], sharing: ReturnType<typeof laneSharing>): Part[][] {
  if (sharing === 'together') return [parts];
  if (sharing === 'one-after-another') return parts.map((part) => [part]);
  // Each heavy part alone, then the others side by side.
  const heavy = parts.filter((part) => part.heavy);
  const rest = parts.filter((part) => !part.heavy);
  return [...heavy.map((part) => [part]), rest].filter((step) => step.length > 0);
}

/** Everything the parts need, once, before any starts. */
async function obtainPrerequisites(): Promise<ResolvedDatabase> {
  const started = Date.now();
  // Go's builds keep the cores busy while apt mostly downloads: the two go side by side.
  const goBuilds = (async () => {
    await obtainTemporalCli(log);
    await obtainTemporalClusterBinaries(log, { withUi: true });
    await obtainJaeger(log);
  })();
  const debian = (async () => {
    // One after the other: apt holds one lock.
    for (const program of [CHROMIUM, NGINX, PG_DUMP, PROMTOOL])
      await obtainDebianProgram(program, log);
    await obtainSpin(log);
  })();
  await Promise.all([goBuilds, debian]);
  const database = await resolveDatabase({
    stateDir: path.join(ROOT, 'test-output', 'state'),
    log,
  });
  log(`prerequisites ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return database;
}

/**
 * The jest runs for these engines. A caller's file filter, or `--long`, runs each engine's
 * chosen files in one part.
 */
function planParts(engines: TemporalEngineKind[], filtered: boolean, long: boolean): Part[] {
  const parts: Part[] = [];
  const ignoring = (files: string[], folders: string[] = []): string[] => [
    '--testPathIgnorePatterns',
    ...files.map(fileEnd),
    ...folders.map((folder) => `/${folder.replace(/\./g, '\\.')}`),
    '/node_modules/',
  ];
  for (const engine of engines) {
    if (engine === 'cluster') {
      const workers = wholeNumber('ONEJOB_TEST_CLUSTER_WORKERS', 1);
      if (filtered) parts.push({ name: 'cluster', engine, workers, select: [] });
      else {
        parts.push({
          name: 'cluster-heavy',
          engine,
          workers: 1,
          select: CLUSTER_HEAVY_TESTS,
          heavy: true,
        });
        parts.push({ name: 'cluster', engine, workers, select: ignoring(CLUSTER_HEAVY_TESTS) });
      }
    } else if (filtered || long)
      parts.push({
        name: 'dev',
        engine,
        workers: 1,
        // The nightly length runs the engine-sensitive files on the dev server as well.
        select: [
          ...(long && !filtered ? [...EXPLORING_TESTS, ENGINE_TESTS] : []),
          ...ignoring(PRODUCTION_ENGINE_ONLY_TESTS),
        ],
      });
    else {
      // With the production engine in the run, the engine-sensitive files run there only.
      const elsewhere = engines.includes('cluster');
      const heavy = HEAVY_TESTS.filter((file) => !(elsewhere && file.startsWith(ENGINE_TESTS)));
      parts.push({ name: 'dev-heavy', engine, workers: 1, select: heavy, heavy: true });
      parts.push({
        name: 'dev',
        engine,
        // Three: with two beside the production engine's one, the cores were 1.4 busy of 2.
        workers: wholeNumber('ONEJOB_TEST_WORKERS', 3),
        select: ignoring(
          [...HEAVY_TESTS, ...PRODUCTION_ENGINE_ONLY_TESTS],
          elsewhere ? [ENGINE_TESTS] : [],
        ),
      });
    }
  }
  return parts;
}

/** A pattern that matches exactly this test file's path. */
function fileEnd(file: string): string {
  return `/${file.replace(/\./g, '\\.')}$`;
}

/** Runs one part's jest; its lines are prefixed with its name, since parts can share stdout. */
function runPart(part: Part, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const prefix = `[${part.name}] `;
  const filtered = args.some((arg) => !arg.startsWith('-'));
  const jestArgs = [
    JEST,
    part.workers > 1 ? `--maxWorkers=${part.workers}` : '--runInBand',
    '--json',
    `--outputFile=${resultsFile(part)}`,
    // Only a file filter may leave a part with no file; otherwise an empty part fails.
    ...(filtered ? ['--passWithNoTests'] : []),
    ...args,
    ...part.select,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, jestArgs, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, [TEMPORAL_ENGINE_VARIABLE]: part.engine },
    });
    prefixLines(child.stdout, process.stdout, prefix);
    prefixLines(child.stderr, process.stderr, prefix);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function prefixLines(from: NodeJS.ReadableStream, to: NodeJS.WritableStream, prefix: string): void {
  let partial = '';
  from.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) to.write(`${prefix}${line}\n`);
  });
  from.on('end', () => {
    if (partial) to.write(`${prefix}${partial}\n`);
  });
}

function resultsFile(part: Part): string {
  return path.join(RESULTS_DIR, `jest-${part.name}.json`);
}

interface JestResults {
  numFailedTests: number;
  numPassedTests: number;
  testResults: Array<{
    name: string;
    status: string;
    startTime: number;
    endTime: number;
    /** Set when the file itself failed (a hook, a syntax error). */
    message?: string;
    assertionResults: Array<{ status: string; fullName: string; failureMessages: string[] }>;
  }>;
}

/** A failure's first lines: enough to see what broke when only the end of the output is kept. */
const firstLines = (text: string, count = 12): string =>
  text
    .split('\n')
    .slice(0, count)
    .map((line) => `      ${line}`)
    .join('\n');

/**
 * Every failed test again, at the very end with its first lines: CI keeps only the output's
 * tail, and a failure printed mid-run among hundreds of lines may be cut from it.
 */
function printFailures(part: string, results: JestResults): void {
  for (const file of results.testResults) {
    if (file.status !== 'failed') continue;
    const name = path.relative(ROOT, file.name);
    const failed = file.assertionResults.filter((a) => a.status === 'failed');
    if (failed.length === 0 && file.message)
      console.log(`\n== failed in ${part}: ${name}\n${firstLines(file.message, 20)}`);
    for (const test of failed)
      console.log(
        `\n== failed in ${part}: ${name} › ${test.fullName}\n${firstLines(test.failureMessages.join('\n'))}`,
      );
  }
}

/** Every file's time in each part, slowest first; then every failed test's first lines. */
function printFileTimes(parts: Part[]): void {
  const rows: Array<{ part: string; file: string; seconds: number; status: string }> = [];
  const failures: Array<() => void> = [];
  for (const part of parts) {
    const file = resultsFile(part);
    if (!existsSync(file)) {
      console.log(`\nno results from ${part.name} (${file})`);
      continue;
    }
    const results = JSON.parse(readFileSync(file, 'utf8')) as JestResults;
    failures.push(() => printFailures(part.name, results));
    for (const result of results.testResults)
      rows.push({
        part: part.name,
        file: path.relative(ROOT, result.name),
        seconds: (result.endTime - result.startTime) / 1000,
        status: result.status,
      });
  }
  rows.sort((a, b) => b.seconds - a.seconds);
  console.log('\n== time per test file, slowest first');
  console.log('   seconds  part       status  file');
  for (const row of rows)
    console.log(
      `${row.seconds.toFixed(1).padStart(10)}  ${row.part.padEnd(9)}  ${row.status.padEnd(6)}  ${row.file}`,
    );
  const total = rows.reduce((sum, row) => sum + row.seconds, 0);
  console.log(`${total.toFixed(1).padStart(10)}  (sum over ${rows.length} files)`);
  for (const print of failures) print();
}

async function main(): Promise<void> {
  const started = Date.now();
  const long = process.argv.includes('--long');
  const args = process.argv.slice(2).filter((arg) => arg !== '--long');
  const filtered = args.some((arg) => !arg.startsWith('-'));
  const engines: TemporalEngineKind[] = process.env[TEMPORAL_ENGINE_VARIABLE]
    ? [temporalEngineKind()]
    : long
      ? ['dev']
      : ['dev', 'cluster'];
  const parts = planParts(engines, filtered, long);
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  mkdirSync(RESULTS_DIR, { recursive: true });

  const database = await obtainPrerequisites();
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The parts share one embedded server rather than each starting its own in one folder.
  if (database.source === 'embedded') env.DATABASE_URL = database.adminUrl;
  if (long) env[LENGTH_VARIABLE] = 'long';
  const plan = steps(parts, laneSharing());
  log(
    `${long ? 'full-length exploring tests' : 'the suite'}: ${plan
      .map((step) => step.map((part) => `${part.name} (${part.workers} at once)`).join(' beside '))
      .join(', then ')}`,
  );

  const clusterDatabase =
    engines.length > 1
      ? await startEmbeddedPostgres(
          path.join(ROOT, 'test-output', 'state', 'cluster-postgres'),
          log,
        )
      : undefined;
  const codes = new Map<Part, number>();
  const testsStarted = sampleCpu();
  try {
    const run = async (part: Part): Promise<void> => {
      const partStarted = Date.now();
      const cpuBefore = sampleCpu();
      const code = await runPart(
        part,
        args,
        part.engine === 'cluster' && clusterDatabase
          ? { ...env, DATABASE_URL: clusterDatabase.url }
          : env,
      );
      codes.set(part, code);
      const cpu = describeCpu(cpuBefore, sampleCpu());
      log(
        `${part.name} ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - partStarted) / 1000).toFixed(0)} s${cpu ? ` (the machine: ${cpu})` : ''}`,
      );
    };
    for (const step of plan) await Promise.all(step.map(run));
  } finally {
    await clusterDatabase?.process.stop();
    await database.stop();
  }
  printFileTimes(parts);
  const failed = parts.filter((part) => codes.get(part) !== 0).map((part) => part.name);
  const cpu = describeCpu(testsStarted, sampleCpu());
  console.log(`\n== npm test took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (cpu) console.log(`   its parts: ${cpu}`);
  if (failed.length > 0) {
    console.error(`tests failed in: ${failed.join(', ')}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(`npm test: ${(error as Error).message}`);
  process.exit(1);
});
