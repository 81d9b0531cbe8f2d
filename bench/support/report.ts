import type { CpuProfileSummary } from './cpuProfile';
import type { Comparison, LatencyCurve, RateCurve, ScenarioResult } from './scenario';

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  smoke: boolean;
  machine: { cpus: number; memoryGiB: number; node: string };
  servers: { temporal: string; postgres: string };
  scenarios: Record<string, ScenarioResult>;
  /** With --profile-worker: where each of our worker's threads spent its CPU over the run. */
  workerCpuProfile?: Array<{ thread: string; file: string } & CpuProfileSummary>;
  /** With --profile-api: where our API spent its CPU over the run. */
  apiCpuProfile?: { file: string } & CpuProfileSummary;
}

const format = (value: number | undefined, unit = ''): string =>
  value === undefined || Number.isNaN(value)
    ? '—'
    : `${Number.isInteger(value) ? value : value.toFixed(value < 10 ? 2 : 1)}${unit ? ` ${unit}` : ''}`;

function verdict(comparison: Comparison): string {
  if (comparison.met === undefined) return '';
  return comparison.met ? 'met' : 'NOT met';
}

export function comparisons(report: BenchReport): Comparison[] {
  return Object.values(report.scenarios).flatMap((result) => result.comparisons);
}

/** The headline table, in Markdown: each measure of ours beside its baseline, the ratio and goal. */
export function markdownTable(report: BenchReport): string {
  const lines = [
    '| row | measure | ours | baseline | ratio | goal | |',
    '|---|---|---|---|---|---|---|',
    ...comparisons(report).map(
      (c) =>
        `| ${c.row} | ${c.measure} | ${format(c.ours, c.unit)} | ${format(c.baseline, c.baseline === undefined ? '' : c.unit)} | ${c.ratio === undefined ? '—' : `${format(c.ratio)}×`} | ${c.goal} | ${verdict(c)} |`,
    ),
  ];
  return lines.join('\n');
}

export function markdownReport(report: BenchReport, chartFile: string): string {
  const details = Object.entries(report.scenarios)
    .map(
      ([name, result]) =>
        `### ${name}\n\n\`\`\`json\n${JSON.stringify(result.details, null, 2)}\n\`\`\``,
    )
    .join('\n\n');
  return [
    `# onejob benchmark, ${report.startedAt}${report.smoke ? ' (smoke run: too short to mean anything)' : ''}`,
    '',
    `${report.machine.cpus} cores, ${report.machine.memoryGiB} GiB, Node ${report.machine.node}; ${report.servers.temporal}; ${report.servers.postgres}. Ours and the baseline ran on the same servers, taking turns.`,
    '',
    markdownTable(report),
    '',
    `![latency and throughput](${chartFile})`,
    '',
    '## Details',
    '',
    details,
    '',
    ...(report.workerCpuProfile ?? []).flatMap((thread) => [workerProfileSection(thread), '']),
  ].join('\n');
}

/** The table for a terminal. */
export function printTable(report: BenchReport): void {
  console.table(
    comparisons(report).map((c) => ({
      row: c.row,
      measure: c.measure,
      ours: format(c.ours, c.unit),
      baseline: format(c.baseline, c.baseline === undefined ? '' : c.unit),
      ratio: c.ratio === undefined ? '—' : `${format(c.ratio)}×`,
      goal: c.goal,
      verdict: verdict(c),
    })),
  );
}

export function curves(report: BenchReport): { latency: LatencyCurve[]; rate: RateCurve[] } {
  const results = Object.values(report.scenarios);
  return {
    latency: results.flatMap((result) => result.latencyCurves ?? []),
    rate: results.flatMap((result) => result.rateCurves ?? []),
  };
}

function workerProfileSection(
  profile: NonNullable<BenchReport['workerCpuProfile']>[number],
): string {
  const percent = (share: number) => `${(100 * share).toFixed(1)} %`;
  return [
    `## Our worker's CPU profile: its ${profile.thread}`,
    '',
    `Busy ${profile.busyMs} ms (idle ${profile.idleMs} ms) over the run, from \`${profile.file}\`.`,
    '',
    '| kind of work | ms | share |',
    '|---|---|---|',
    ...profile.byKind.map(({ kind, ms, share }) => `| ${kind} | ${ms} | ${percent(share)} |`),
    '',
    '| function (self time) | ms | share |',
    '|---|---|---|',
    ...profile.topFunctions.map(
      (entry) => `| \`${entry.function}\` | ${entry.ms} | ${percent(entry.share)} |`,
    ),
  ].join('\n');
}
