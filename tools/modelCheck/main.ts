import { Command, InvalidArgumentError } from 'commander';
import { consequencesOnly, MODEL_RUNS, OPEN_FINDINGS, PLANTED_MODEL_BUGS } from './runs';
import { obtainSpin, verifyModel, type ModelResult } from './spin';

/**
 * `npm run verify:model`: model/onejob.pml checked by SPIN, every run exhaustive within its
 * bounds; a table of states explored and the verdict; exit 1 on any violation, with the
 * counterexample step by step. `--bug NAME` checks the model with a planted mistake instead
 * (`--consequences-only`: with the asserts at the steps compiled out); `--finding NAME` makes a
 * run that finds a defect of the code as it stands (OPEN_FINDINGS), and prints it.
 */
function table(results: ModelResult[]): string {
  const rows = results.map((r) => [
    r.run.name,
    r.run.check,
    r.states.toLocaleString('en-US'),
    r.transitions.toLocaleString('en-US'),
    String(r.depth),
    `${r.memoryMb.toFixed(0)} MB`,
    `${r.seconds.toFixed(1)} s`,
    r.errors === 0 ? 'holds' : `VIOLATED: ${r.violation ?? 'see the trail'}`,
  ]);
  const header = ['run', 'checks', 'states', 'transitions', 'depth', 'memory', 'time', 'verdict'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const program = new Command('verify:model')
    .description('Checks model/onejob.pml with SPIN, exhaustively within the bounds it states.')
    .option(
      '--bug <name>',
      `plant a mistake: ${Object.keys(PLANTED_MODEL_BUGS).join(', ')}`,
      (v) => {
        if (!(v in PLANTED_MODEL_BUGS))
          throw new InvalidArgumentError(`known: ${Object.keys(PLANTED_MODEL_BUGS).join(', ')}`);
        return v;
      },
    )
    .option(
      '--consequences-only',
      'with --bug: the asserts at the steps compiled out, so what the mistake leads to must catch it',
    )
    .option('--only <text>', 'only the runs whose name contains this text')
    .option(
      '--finding <name>',
      `a run that finds a defect of the code: ${Object.keys(OPEN_FINDINGS).join(', ') || 'none open'}`,
      (v) => {
        if (!(v in OPEN_FINDINGS))
          throw new InvalidArgumentError(
            `known: ${Object.keys(OPEN_FINDINGS).join(', ') || 'none (no finding is open)'}`,
          );
        return v;
      },
    )
    .parse();
  const options = program.opts<{
    bug?: string;
    only?: string;
    consequencesOnly?: boolean;
    finding?: string;
  }>();
  const tools = await obtainSpin((line) => console.log(line));
  const planted = options.bug ? PLANTED_MODEL_BUGS[options.bug]! : undefined;
  const finding = options.finding ? OPEN_FINDINGS[options.finding]! : undefined;
  const runs = planted
    ? [options.consequencesOnly ? consequencesOnly(planted) : planted]
    : finding
      ? [finding]
      : MODEL_RUNS.filter((run) => !options.only || run.name.includes(options.only));
  if (runs.length === 0) throw new Error(`no run's name contains "${options.only}"`);

  const results: ModelResult[] = [];
  for (const run of runs) {
    console.log(`checking ${run.name} (${run.check}) …`);
    const result = await verifyModel(run, tools);
    results.push(result);
    console.log(
      `  ${result.errors === 0 ? 'holds' : 'VIOLATED'}: ${result.states.toLocaleString('en-US')} states, ${result.seconds.toFixed(1)} s, ${result.memoryMb.toFixed(0)} MB`,
    );
    if (result.counterexample)
      console.log(`\n${run.name}: ${result.violation}\n${result.counterexample}\n`);
  }
  console.log(`\n${table(results)}`);
  const violated = results.filter((r) => r.errors > 0);
  console.log(
    violated.length === 0
      ? `\nevery property holds in every run (${results.reduce((n, r) => n + r.states, 0).toLocaleString('en-US')} states in all)`
      : `\n${violated.length} of ${results.length} runs found a violation`,
  );
  process.exitCode = violated.length === 0 ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(`verify:model: ${(error as Error).message}`);
  process.exitCode = 2;
});
