import { Command, InvalidArgumentError } from 'commander';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TemporalEngineKind } from '../stack/temporalEngine';
import { runCampaign } from './campaign';
import { newSeed } from './random';
import { formatReport } from './report';

/**
 * `npm run chaos`: a seeded fault campaign against the whole running stack. The seed is printed
 * first, so any failure can be replayed; the exit code is non-zero on any violation.
 */
function positiveNumber(label: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isFinite(number) || number < 0)
      throw new InvalidArgumentError(`${label} must be a number ≥ 0`);
    return number;
  };
}

async function main(): Promise<void> {
  const program = new Command('chaos')
    .description(
      'Drive the real stack with random traffic, provider faults and process kills, then check every invariant.',
    )
    .option(
      '--seed <n>',
      'seed of the schedule (printed; replay a run with it)',
      positiveNumber('--seed'),
    )
    .option('--ops <n>', 'operations to draw', positiveNumber('--ops'))
    .option(
      '--opening-only',
      'only the opening (each provider quirk aimed at a job of its own), no seeded traffic',
    )
    .option('--minutes <n>', 'minutes of traffic', positiveNumber('--minutes'))
    .option(
      '--concurrency <n>',
      'lanes drawing operations at once',
      positiveNumber('--concurrency'),
      8,
    )
    .option(
      '--fault-every <seconds>',
      'seconds between process faults (0: none)',
      positiveNumber('--fault-every'),
      30,
    )
    .option(
      '--engine <engine>',
      'Temporal engine: dev (the dev server) or cluster (the Temporal server on PostgreSQL)',
      (value: string): TemporalEngineKind => {
        if (value !== 'dev' && value !== 'cluster')
          throw new InvalidArgumentError('--engine must be dev or cluster');
        return value;
      },
      'dev',
    )
    .option(
      '--temporal-postgres <shape>',
      "with --engine cluster: Temporal's state on our PostgreSQL server (shared) or on one of its own (apart)",
      (value: string): 'shared' | 'apart' => {
        if (value !== 'shared' && value !== 'apart')
          throw new InvalidArgumentError('--temporal-postgres must be shared or apart');
        return value;
      },
      'shared',
    )
    .option('--dir <path>', 'folder for the journal, state and logs', '.onejob/chaos')
    .option('--build <path>', 'the compiled service to run (default: this checkout)')
    .option('--report <file>', 'also write the report as JSON here')
    .showHelpAfterError();
  program.parse();
  const options = program.opts<{
    seed?: number;
    openingOnly?: boolean;
    ops?: number;
    minutes?: number;
    concurrency: number;
    faultEvery: number;
    engine: TemporalEngineKind;
    temporalPostgres: 'shared' | 'apart';
    dir: string;
    build?: string;
    report?: string;
  }>();
  const seed = options.seed ?? newSeed();
  const minutes =
    options.openingOnly || options.ops !== undefined || options.minutes !== undefined
      ? options.minutes
      : 3;
  console.log(`chaos: seed ${seed}`);
  console.log(
    `chaos: engine ${options.engine}${options.engine === 'cluster' ? `, Temporal's PostgreSQL ${options.temporalPostgres}` : ''}`,
  );
  const dir = path.resolve(
    options.dir,
    `seed-${seed}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  const report = await runCampaign({
    seed,
    openingOnly: options.openingOnly === true,
    ops: options.ops,
    minutes,
    concurrency: Math.max(1, Math.floor(options.concurrency)),
    faultEverySeconds: options.faultEvery,
    dir,
    buildDir: options.build && path.resolve(options.build),
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    databaseUrl: process.env.DATABASE_URL,
    engine: options.engine,
    temporalPostgres: options.temporalPostgres,
    log: (line) => console.log(`chaos: ${line}`),
  });
  console.log(formatReport(report));
  if (options.report) writeFileSync(options.report, JSON.stringify(report, null, 2));
  process.exit(report.violations.length === 0 ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(`chaos: ${(error as Error).stack ?? String(error)}`);
  process.exit(2);
});
