import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CpuProfileSummary } from '../bench/support/cpuProfile';
import { harness, ROOT, TEST_OUTPUT } from './support/harness';

/**
 * `npm run bench -- --smoke` still works: every row runs briefly against this run's Temporal and
 * PostgreSQL and writes its report, table and chart. Nothing here judges speed (CI machines
 * vary); it judges that every request got the answer it must, so a benchmark never reports the
 * speed of errors.
 */
interface Report {
  smoke: boolean;
  scenarios: Record<
    string,
    { comparisons: Array<{ row: string; ours: number }>; details: Record<string, unknown> }
  >;
  workerCpuProfile?: Array<{ thread: string } & CpuProfileSummary>;
  apiCpuProfile?: { file: string } & CpuProfileSummary;
}

let report: Report;
let outDir: string;

/** Every `unexpected` tally anywhere in the details: answers other than the expected status. */
function unexpectedTallies(value: unknown, where = ''): Array<[string, unknown]> {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === 'unexpected' ? [[where, inner]] : unexpectedTallies(inner, `${where}/${key}`),
  );
}

beforeAll(async () => {
  outDir = mkdtempSync(path.join(TEST_OUTPUT, 'bench-'));
  const info = harness();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'bench', 'main.ts'),
      '--smoke',
      '--profile-worker',
      '--profile-api',
      '--out',
      outDir,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: info.temporalAddress,
        DATABASE_URL: info.adminDatabaseUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`npm run bench -- --smoke exited ${code}:\n${output}`);
  const json = readdirSync(outDir).find((file) => file.endsWith('.json'));
  if (!json) throw new Error(`the smoke run wrote no report:\n${output}`);
  report = JSON.parse(readFileSync(path.join(outDir, json), 'utf8')) as Report;
}, 600_000);

test('the smoke run measures every row beside its baseline and says so in its report', () => {
  expect(report.smoke).toBe(true);
  expect(Object.keys(report.scenarios).sort()).toEqual(
    [
      'bad day',
      'blocked',
      'create',
      'duplicates',
      'end to end',
      'growth',
      'hedging',
      'replay',
      'tracing',
      'webhook isolation',
    ].sort(),
  );
  for (const [name, result] of Object.entries(report.scenarios)) {
    expect({ name, rows: result.comparisons.length > 0 }).toEqual({ name, rows: true });
    for (const comparison of result.comparisons)
      expect({ name, ours: Number.isFinite(comparison.ours) }).toEqual({ name, ours: true });
  }
});

test('every benchmark request got the status it must (a create 201, a replay 200) and every job succeeded', () => {
  // Each row that sends requests of its own keeps a tally (test/benchmarkTallies.test.ts shows
  // one counting wrong answers): a row that lost it would pass the check below with nothing read.
  const tallied = new Set(
    unexpectedTallies(report.scenarios).map(([where]) => where.split('/')[1]),
  );
  expect([...tallied].sort()).toEqual(
    ['create', 'duplicates', 'growth', 'replay', 'webhook isolation'].sort(),
  );
  expect(
    unexpectedTallies(report.scenarios).filter(
      ([, tally]) => Object.keys(tally as object).length > 0,
    ),
  ).toEqual([]);
  const endToEnd = report.scenarios['end to end']!.details as Record<
    string,
    Record<string, number>
  >;
  expect(endToEnd.ours!['jobs not succeeded']).toBe(0);
  expect(endToEnd.baseline!['jobs not succeeded']).toBe(0);
  expect(endToEnd.ours!['jobs succeeded']).toBeGreaterThan(0);
  const hedging = report.scenarios.hedging!.details.statuses as Record<string, number>;
  expect(Object.keys(hedging).sort()).toEqual(['exclusive succeeded', 'hedged succeeded']);
});

test('the report comes with its Markdown table and an SVG chart', () => {
  const files = readdirSync(outDir);
  const markdown = readFileSync(
    path.join(
      outDir,
      files.find((f) => f.endsWith('.md'))!,
    ),
    'utf8',
  );
  expect(markdown).toMatch(/\| row \| measure \| ours \| baseline \| ratio \| goal \|/);
  expect(markdown).toContain("## Our worker's CPU profile: its main thread");
  const svg = readFileSync(
    path.join(
      outDir,
      files.find((f) => f.endsWith('.svg'))!,
    ),
    'utf8',
  );
  expect(svg.startsWith('<svg')).toBe(true);
  expect(svg).toContain('ours');
  expect(svg).toContain('baseline');
});

test("--profile-worker says where our worker's CPU went, by kind of work, from its own profile", () => {
  const [profile, ...workflowThreads] = report.workerCpuProfile!;
  expect(profile!.thread).toBe('main thread');
  expect(profile!.busyMs).toBeGreaterThan(0);
  // Workflows run in a thread of their own (the SDK's reused V8 context).
  expect(workflowThreads.map(({ thread }) => thread)).toEqual([
    expect.stringMatching(/^thread \d+ \(workflows\)$/),
  ]);
  const kinds = profile!.byKind.map(({ kind }) => kind);
  // A job's queries and its workflow's activations run in every row.
  expect(kinds).toEqual(
    expect.arrayContaining([
      'PostgreSQL client: build, send and parse queries',
      'Temporal SDK: core bridge, activations, payloads',
    ]),
  );
  const shares = profile!.byKind.reduce((sum, { share }) => sum + share, 0);
  expect(shares).toBeCloseTo(1, 5);
});

test("--profile-api says where our API's CPU went: by kind of work, and its costliest functions", () => {
  const profile = report.apiCpuProfile!;
  expect(profile.file).toMatch(/-api-cpu\/CPU\..*\.cpuprofile$/);
  expect(profile.busyMs).toBeGreaterThan(0);
  // Every create and replay reads or writes its job row.
  expect(profile.byKind.map(({ kind }) => kind)).toContain(
    'PostgreSQL client: build, send and parse queries',
  );
  expect(profile.byKind.reduce((sum, { share }) => sum + share, 0)).toBeCloseTo(1, 5);
  expect(profile.topFunctions.length).toBeGreaterThan(0);
});
