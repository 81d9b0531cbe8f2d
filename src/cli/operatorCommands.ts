import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { listRaces } from '../db/races';
import { resolveAttempt } from '../service/attempts';
import { operatorName, output, withPool, withServices } from './commandContext';
import { addJobCommands } from './jobCommands';
import { addSettleCommand } from './settleCommand';
import { renderTable } from './table';

/** `jobs list|show|trace|cancel|release-key`, `attempts resolve|settle`, `races list`: what operators do by hand. */
export function addOperatorCommands(program: Command): void {
  addJobCommands(program);

  const attempts = program
    .command('attempts')
    .description('Settle attempts: one by hand, or many from a provider’s report');
  addSettleCommand(attempts);
  attempts
    .command('resolve <attemptId>')
    .description(
      'Settle an unknown attempt: --failed, or --succeeded with its result (which goes through the CAS)',
    )
    .option('--failed', 'it certainly had no effect')
    .option('--succeeded', 'it took effect; give the result with --result-file')
    .option('--result-file <path>', 'JSON file with the provider result')
    .requiredOption('--reason <text>', 'how you know, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(
      async (
        attemptId: string,
        options: {
          failed?: boolean;
          succeeded?: boolean;
          resultFile?: string;
          reason: string;
          operator?: string;
        },
      ) => {
        if (Boolean(options.failed) === Boolean(options.succeeded))
          throw new Error('say either --failed or --succeeded');
        if (options.succeeded && !options.resultFile)
          throw new Error('--succeeded needs --result-file');
        const result = options.resultFile
          ? (JSON.parse(await readFile(options.resultFile, 'utf8')) as unknown)
          : undefined;
        await withServices(async (deps) => {
          const resolved = await resolveAttempt(deps, operatorName(options.operator), attemptId, {
            outcome: options.succeeded ? 'succeeded' : 'failed',
            reason: options.reason,
            ...(result === undefined ? {} : { result }),
          });
          if (!resolved) throw new Error(`no attempt ${attemptId}`);
          console.log(
            resolved.held
              ? `attempt ${resolved.attemptId} is ${resolved.state}: your failed is held until its call can no longer land, then it settles failed (unless the call answers success first)`
              : `attempt ${resolved.attemptId} is ${resolved.state}`,
          );
        });
      },
    );

  program
    .command('races')
    .description('Results that lost the compare-and-swap')
    .command('list')
    .option('--job <jobId>', 'only this job')
    .option('--limit <n>', 'how many', (v) => Number.parseInt(v, 10), 50)
    .option('--json', 'print JSON')
    .action(async (options: { job?: string; limit: number; json?: boolean }) => {
      await withPool(async (pool) => {
        const races = await listRaces(pool, { jobId: options.job, limit: options.limit });
        output(options.json, races, () =>
          renderTable(
            ['job', 'lost', 'winner', 'expected v', 'seen v', 'when'],
            races.map((r) => [
              r.jobId,
              r.losingAttemptId,
              r.winningAttemptId ?? '(job ended)',
              String(r.expectedVersion),
              String(r.observedVersion),
              r.occurredAt.toISOString(),
            ]),
          ),
        );
      });
    });
}
