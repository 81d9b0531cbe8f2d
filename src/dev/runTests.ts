import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { obtainSpin } from '../modelCheck/spin';
import { CHROMIUM, NGINX, obtainDebianProgram } from './debianPackages';
import { resolveDatabase, startEmbeddedPostgres, type ResolvedDatabase } from './postgres';
import { obtainTemporalCli } from './temporalCli';
import { obtainTemporalClusterBinaries } from './temporalClusterBinaries';
import {
  TEMPORAL_ENGINE_VARIABLE,
  temporalEngineKind,
  type TemporalEngineKind,
} from './temporalEngine';

/**
 * `npm test`: the whole suite on the dev server, then the engine-sensitive tests (listed in
 * jest.config.js) on the production engine, the Temporal server on PostgreSQL (at the same time
 * with ONEJOB_TEST_LANES=together; ONEJOB_TEST_WORKERS=2 runs two dev-server files at once). Arguments go to both jest runs (`npm test -- test/hedging.test.ts`);
 * ONEJOB_TEMPORAL_ENGINE=dev or =cluster runs one engine only. `npm run test:long` (`--long`)
 * runs the exploring tests (campaign, model-based runs, fuzzer) at full length on the dev server.
 *
 * What both lanes need is obtained once, first: the Temporal programs (a Go build on a fresh
 * machine), Debian's programs (apt holds one lock) and PostgreSQL. The production engine's lane
 * gets an embedded PostgreSQL server of its own: the Temporal server keeps about forty
 * connections open, and beside the dev lane's two files (a campaign among them) one server's
 * default hundred runs out. At the end every test file's time is printed, slowest
 * first, so a slowdown shows in every CI log.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const RESULTS_DIR = path.join(ROOT, 'test-output', 'results');
const LENGTH_VARIABLE = 'ONEJOB_TEST_LENGTH';
/** The tests that explore (random traffic, generated scenarios): what `--long` lengthens. */
const EXPLORING_TESTS = [
  'test/faultCampaign.test.ts',
  'test/faultCampaignPlantedBugs.test.ts',
  'test/modelBased.test.ts',
  'test/modelBasedPlantedBugs.test.ts',
  'test/httpFuzz.test.ts',
  'test/protocolModel.test.ts',
];

interface Lane {
  engine: TemporalEngineKind;
  /** Test files run at once in this lane (jest workers). */
  workers: number;
}

function log(line: string): void {
  console.log(`[npm test] ${line}`);
}

/**
 * Test files at once on the dev server (ONEJOB_TEST_WORKERS, default 1); the production engine's
 * lane runs one at a time.
 */
function devWorkers(): number {
  const raw = process.env.ONEJOB_TEST_WORKERS;
  if (raw === undefined || raw === '') return 1;
  const workers = Number(raw);
  if (!Number.isInteger(workers) || workers < 1)
    throw new Error(`ONEJOB_TEST_WORKERS must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
  return workers;
}

/**
 * Whether the two lanes run at the same time (ONEJOB_TEST_LANES=together). Not by default: on
 * two cores, the lanes together (three fault campaigns at once in one, the production engine in
 * the other) starved the services of the time-sensitive tests (an API not healthy in time,
 * provider calls past their 1 s timeout), so by default the production engine's lane follows.
 */
function lanesTogether(): boolean {
  const raw = process.env.ONEJOB_TEST_LANES;
  if (raw === undefined || raw === '' || raw === 'one-after-another') return false;
  if (raw === 'together') return true;
  throw new Error(
    `ONEJOB_TEST_LANES must be together or one-after-another, not ${JSON.stringify(raw)}`,
  );
}

/** Everything both lanes need, once, before either starts. */
async function obtainPrerequisites(): Promise<ResolvedDatabase> {
  const started = Date.now();
  await obtainTemporalCli(log);
  await obtainTemporalClusterBinaries(log, { withUi: true });
  for (const program of [CHROMIUM, NGINX]) await obtainDebianProgram(program, log);
  await obtainSpin(log);
  const database = await resolveDatabase({
    stateDir: path.join(ROOT, 'test-output', 'state'),
    log,
  });
  log(`prerequisites ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return database;
}

/** Runs one lane's jest; its lines are prefixed with the engine, since two lanes share stdout. */
function runLane(lane: Lane, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const prefix = lane.engine === 'dev' ? '[dev] ' : '[cluster] ';
  const filtered = args.some((arg) => !arg.startsWith('-'));
  const jestArgs = [
    JEST,
    lane.workers > 1 ? `--maxWorkers=${lane.workers}` : '--runInBand',
    '--json',
    `--outputFile=${resultsFile(lane.engine)}`,
    // Only a file filter may leave the production engine's list empty; otherwise an empty run
    // fails (jest.config.js also refuses a listed file that does not exist).
    ...(filtered ? ['--passWithNoTests'] : []),
    ...args,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, jestArgs, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, [TEMPORAL_ENGINE_VARIABLE]: lane.engine },
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

function resultsFile(engine: TemporalEngineKind): string {
  return path.join(RESULTS_DIR, `jest-${engine}.json`);
}

interface JestResults {
  numFailedTests: number;
  numPassedTests: number;
  testResults: Array<{
    name: string;
    status: string;
    startTime: number;
    endTime: number;
    assertionResults: Array<{ status: string }>;
  }>;
}

/** Every file's time on each engine, slowest first. */
function printFileTimes(lanes: Lane[]): void {
  const rows: Array<{ engine: string; file: string; seconds: number; status: string }> = [];
  for (const lane of lanes) {
    const file = resultsFile(lane.engine);
    if (!existsSync(file)) {
      console.log(`\nno results from the ${lane.engine} lane (${file})`);
      continue;
    }
    const results = JSON.parse(readFileSync(file, 'utf8')) as JestResults;
    for (const result of results.testResults)
      rows.push({
        engine: lane.engine,
        file: path.relative(ROOT, result.name),
        seconds: (result.endTime - result.startTime) / 1000,
        status: result.status,
      });
  }
  rows.sort((a, b) => b.seconds - a.seconds);
  console.log('\n== time per test file, slowest first');
  console.log('   seconds  engine   status  file');
  for (const row of rows)
    console.log(
      `${row.seconds.toFixed(1).padStart(10)}  ${row.engine.padEnd(7)}  ${row.status.padEnd(6)}  ${row.file}`,
    );
  const total = rows.reduce((sum, row) => sum + row.seconds, 0);
  console.log(`${total.toFixed(1).padStart(10)}  (sum over ${rows.length} files)`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const long = process.argv.includes('--long');
  const args = process.argv.slice(2).filter((arg) => arg !== '--long');
  const engines: TemporalEngineKind[] = process.env[TEMPORAL_ENGINE_VARIABLE]
    ? [temporalEngineKind()]
    : long
      ? ['dev']
      : ['dev', 'cluster'];
  const lanes: Lane[] = engines.map((engine) => ({
    engine,
    workers: engine === 'dev' ? devWorkers() : 1,
  }));
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  mkdirSync(RESULTS_DIR, { recursive: true });

  const database = await obtainPrerequisites();
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Both lanes share one embedded server rather than each starting its own in one folder.
  if (database.source === 'embedded') env.DATABASE_URL = database.adminUrl;
  if (long) env[LENGTH_VARIABLE] = 'long';
  const laneArgs =
    long && args.every((arg) => arg.startsWith('-')) ? [...args, ...EXPLORING_TESTS] : args;
  log(
    `${long ? 'full-length exploring tests' : 'the suite'} on ${lanes
      .map((lane) => `${lane.engine} (${lane.workers} at once)`)
      .join(' and ')}`,
  );

  const clusterDatabase =
    lanes.length > 1
      ? await startEmbeddedPostgres(
          path.join(ROOT, 'test-output', 'state', 'cluster-postgres'),
          log,
        )
      : undefined;
  let codes: number[];
  try {
    const run = (lane: Lane): Promise<number> =>
      runLane(
        lane,
        laneArgs,
        lane.engine === 'cluster' && clusterDatabase
          ? { ...env, DATABASE_URL: clusterDatabase.url }
          : env,
      );
    if (lanesTogether()) codes = await Promise.all(lanes.map(run));
    else {
      codes = [];
      for (const lane of lanes) codes.push(await run(lane));
    }
  } finally {
    await clusterDatabase?.process.stop();
    await database.stop();
  }
  printFileTimes(lanes);
  const failed = lanes.filter((_, index) => codes[index] !== 0).map((lane) => lane.engine);
  console.log(`\n== npm test took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (failed.length > 0) {
    console.error(`tests failed on: ${failed.join(', ')}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(`npm test: ${(error as Error).message}`);
  process.exit(1);
});
