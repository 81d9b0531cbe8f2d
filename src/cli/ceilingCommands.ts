import type { Command } from 'commander';
import { allCeilings, removeCeiling, setCeiling } from '../db/priceCeilings';
import { currencyCode, numberAtLeast, operatorName, output, withPool } from './commandContext';
import { renderTable } from './table';

/** An optional number option of at least `least`: null when not given. */
const optionalNumber = (option: string, text: string | undefined, least: number): number | null =>
  text === undefined ? null : numberAtLeast(option, text, least);

interface CeilingOptions {
  owner?: string;
  jobType?: string;
  maxJobCost?: string;
  currency?: string;
  maxMultiple?: string;
  reason?: string;
  operator?: string;
}

/** `ceilings list|set|remove`: the most a job may cost, and how dear a fallback may be. */
export function addCeilingCommands(program: Command): void {
  const ceilings = program
    .command('ceilings')
    .description(
      'Price ceilings: the most one job may cost, and the most a fallback or hedge may cost beside its primary',
    );

  ceilings
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withPool(async (pool) => {
        const rows = await allCeilings(pool);
        output(options.json, rows, () =>
          renderTable(
            ['owner', 'job type', 'max per job', 'max multiple', 'set by'],
            rows.map((c) => [
              c.ownerId ?? '(all)',
              c.jobType ?? '(all)',
              c.maxJobCost ? `${c.maxJobCost.currency} ${c.maxJobCost.amount}` : '-',
              c.maxMultiple === null ? '-' : `${c.maxMultiple}×`,
              `${c.setBy}: ${c.reason}`,
            ]),
          ),
        );
      });
    });

  ceilings
    .command('set')
    .description('Set the ceiling of an owner and job type (each default: every one)')
    .option('--owner <owner>', 'only this owner')
    .option('--job-type <type>', 'only this job type')
    .option('--max-job-cost <amount>', 'the most one job may cost (with --currency)')
    .option('--currency <code>', 'ISO 4217, for --max-job-cost')
    .option(
      '--max-multiple <n>',
      "the most a fallback or hedge may cost, as a multiple of the job's primary (at least 1)",
    )
    .requiredOption('--reason <text>', 'why, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(async (options: CeilingOptions) => {
      const maxJobCost = optionalNumber('--max-job-cost', options.maxJobCost, 0);
      const maxMultiple = optionalNumber('--max-multiple', options.maxMultiple, 1);
      if (maxJobCost === null && maxMultiple === null)
        throw new Error('say --max-job-cost (with --currency), --max-multiple, or both');
      if ((maxJobCost === null) !== (options.currency === undefined))
        throw new Error('--max-job-cost and --currency go together');
      const currency = options.currency === undefined ? null : currencyCode(options.currency);
      await withPool(async (pool) => {
        await setCeiling(
          pool,
          {
            ownerId: options.owner ?? null,
            jobType: options.jobType ?? null,
            maxJobCost:
              maxJobCost === null || currency === null ? null : { amount: maxJobCost, currency },
            maxMultiple,
          },
          { actor: operatorName(options.operator), reason: options.reason ?? '' },
        );
        console.log('ceiling set');
      });
    });

  ceilings
    .command('remove')
    .option('--owner <owner>', 'the ceiling of this owner (default: the one for every owner)')
    .option('--job-type <type>', 'the ceiling of this job type (default: the one for every type)')
    .action(async (options: CeilingOptions) => {
      await withPool(async (pool) => {
        const removed = await removeCeiling(pool, {
          ownerId: options.owner ?? null,
          jobType: options.jobType ?? null,
        });
        console.log(removed ? 'ceiling removed' : 'there was no such ceiling');
      });
    });
}
