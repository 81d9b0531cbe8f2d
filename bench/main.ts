/**
 * The benchmark: each of our paths beside its baseline on the same servers, taking turns, with
 * the ratio as the headline. Writes bench/results/<timestamp>.{json,md,svg}.
 *
 *   npm run bench                          every row (about 25 minutes)
 *   npm run bench -- --only create,replay  some rows
 *   npm run bench -- --smoke               every row, briefly: checks the suite still works
 *   npm run bench -- --out <folder>        write the results elsewhere
 *   npm run bench -- --profile-worker      also profile our worker's CPU (node --cpu-prof)
 *   npm run bench -- --profile-api         also profile our API's CPU (node --cpu-prof)
 *
 * TEMPORAL_ADDRESS and DATABASE_URL point it at servers of your own (a production cluster);
 * BENCH_BLOCKED_MINUTES sets how long the blocked row holds its jobs (default 10).
 */
import { Command } from 'commander';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { badDayScenario } from './scenarios/badDay';
import { blockedScenario } from './scenarios/blocked';
import { createScenario } from './scenarios/create';
import { duplicatesScenario } from './scenarios/duplicates';
import { endToEndScenario } from './scenarios/endToEnd';
import { growthScenario } from './scenarios/growth';
import { hedgingScenario } from './scenarios/hedging';
import { replayScenario } from './scenarios/replay';
import { tracingScenario } from './scenarios/tracing';
import { webhookIsolationScenario } from './scenarios/webhookIsolation';
import { renderChart } from './support/chart';
import { summarizeCpuProfile } from './support/cpuProfile';
import { BENCH_ROOT, startBenchEnvironment } from './support/environment';
import { markdownReport, printTable, type BenchReport } from './support/report';
import type { Scenario } from './support/scenario';

// Growth first: it needs the table nearly empty, and removes its bulk rows when done.
const SCENARIOS: Scenario[] = [
  growthScenario,
  createScenario,
  replayScenario,
  duplicatesScenario,
  endToEndScenario,
  tracingScenario,
  hedgingScenario,
  badDayScenario,
  webhookIsolationScenario,
  blockedScenario,
];
const NAMES = SCENARIOS.map((scenario) => scenario.name.replace(/ /g, '-'));

async function main(): Promise<void> {
  const options = new Command('bench')
    .option('--only <rows>', `comma-separated rows: ${NAMES.join(', ')}`)
    .option('--smoke', 'every row, briefly (CI checks that the suite still works)', false)
    .option('--out <folder>', 'where the results go', path.join(BENCH_ROOT, 'results'))
    .option('--profile-worker', "profile our worker's CPU (node --cpu-prof) for the report", false)
    .option('--profile-api', "profile our API's CPU (node --cpu-prof) for the report", false)
    .parse()
    .opts<{
      only?: string;
      smoke: boolean;
      out: string;
      profileWorker: boolean;
      profileApi: boolean;
    }>();
  const only = options.only?.split(',').map((name) => name.trim());
  const unknown = only?.filter((name) => !NAMES.includes(name)) ?? [];
  if (unknown.length > 0) {
    console.error(`bench: no row named ${unknown.join(', ')}; the rows are ${NAMES.join(', ')}`);
    process.exit(2);
  }
  const chosen = SCENARIOS.filter((_, index) => !only || only.includes(NAMES[index]!));
  const log = (line: string): void => console.log(`[bench] ${line}`);
  process.env.LOG_LEVEL ??= 'warn';

  const startedAt = new Date().toISOString();
  const stem = startedAt.replace(/[:.]/g, '-');
  // Each service writes its profile as it exits, when the environment stops.
  const profileDir = path.join(options.out, `${stem}-worker-cpu`);
  const apiProfileDir = path.join(options.out, `${stem}-api-cpu`);
  const profiled = (on: boolean, dir: string) =>
    on ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
  const env = await startBenchEnvironment(log, {
    nodeFlags: {
      worker: profiled(options.profileWorker, profileDir),
      api: profiled(options.profileApi, apiProfileDir),
    },
  });
  const report: BenchReport = {
    startedAt,
    finishedAt: '',
    smoke: options.smoke,
    machine: {
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    },
    servers: { temporal: env.temporal, postgres: env.postgres },
    scenarios: {},
  };
  try {
    for (const scenario of chosen) {
      log(`${scenario.name} …`);
      try {
        report.scenarios[scenario.name] = await scenario.run({ env, smoke: options.smoke, log });
      } catch (error) {
        // One broken row must not cost the others' results; the run still fails at the end.
        log(`${scenario.name} failed: ${(error as Error).stack ?? String(error)}`);
        report.scenarios[scenario.name] = { comparisons: [], details: {}, error: String(error) };
      }
    }
  } finally {
    await env.stop();
  }
  report.finishedAt = new Date().toISOString();
  if (options.profileWorker) report.workerCpuProfile = workerThreadProfiles(profileDir);
  if (options.profileApi) report.apiCpuProfile = mainThreadProfile(apiProfileDir);

  mkdirSync(options.out, { recursive: true });
  const chartFile = `${stem}.svg`;
  writeFileSync(path.join(options.out, `${stem}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(options.out, chartFile), await renderChart(report));
  writeFileSync(path.join(options.out, `${stem}.md`), markdownReport(report, chartFile));
  printTable(report);
  for (const { thread, byKind } of report.workerCpuProfile ?? [])
    for (const { kind, ms, share } of byKind)
      log(
        `our worker's ${thread}: ${(100 * share).toFixed(1).padStart(5)} % ${String(ms).padStart(7)} ms  ${kind}`,
      );
  if (report.apiCpuProfile) {
    const { byKind, topFunctions } = report.apiCpuProfile;
    for (const { kind, ms, share } of byKind)
      log(
        `our API: ${(100 * share).toFixed(1).padStart(5)} % ${String(ms).padStart(7)} ms  ${kind}`,
      );
    for (const { function: name, ms, share } of topFunctions)
      log(
        `our API, self: ${(100 * share).toFixed(1).padStart(5)} % ${String(ms).padStart(7)} ms  ${name}`,
      );
  }
  log(`results: ${path.join(options.out, stem)}.{json,md,svg}`);
  const failed = Object.entries(report.scenarios).filter(([, result]) => result.error);
  if (failed.length > 0) {
    console.error(`bench: these rows failed: ${failed.map(([name]) => name).join(', ')}`);
    process.exit(1);
  }
}

/** The API's profile (its one thread), summarized; named relative to the report. */
function mainThreadProfile(dir: string): NonNullable<BenchReport['apiCpuProfile']> {
  const name = readdirSync(dir).find((file) => file.endsWith('.cpuprofile'));
  if (!name) throw new Error(`the API wrote no CPU profile in ${dir}`);
  return {
    file: path.join(path.basename(dir), name),
    ...summarizeCpuProfile(path.join(dir, name)),
  };
}

/**
 * The profiles of the worker's threads, main thread first (Node names them
 * CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile; the others run workflows).
 */
function workerThreadProfiles(dir: string): NonNullable<BenchReport['workerCpuProfile']> {
  const files = readdirSync(dir)
    .map((name) => ({
      name,
      thread: /^CPU\.\d+\.\d+\.\d+\.(\d+)\.\d+\.cpuprofile$/.exec(name)?.[1],
    }))
    .filter((file): file is { name: string; thread: string } => file.thread !== undefined)
    .sort((a, b) => Number(a.thread) - Number(b.thread));
  if (files[0]?.thread !== '0')
    throw new Error(`the worker wrote no CPU profile of its main thread in ${dir}`);
  return files.map(({ name, thread }) => ({
    thread: thread === '0' ? 'main thread' : `thread ${thread} (workflows)`,
    // Named relative to the report, which sits beside the folder.
    file: path.join(path.basename(dir), name),
    ...summarizeCpuProfile(path.join(dir, name)),
  }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
