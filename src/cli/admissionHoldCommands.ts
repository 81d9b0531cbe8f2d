import type { Command } from 'commander';
import { changeAdmissionHold, listAdmissionHolds } from '../db/admissionHolds';
import { jobTypeNames } from '../jobTypes';
import { operatorName, output, withPool } from './commandContext';
import { renderTable } from './table';

/** A job type to hold or release: one onejob has, or none for every type. */
function scopeOf(jobType: string | undefined): string | null {
  if (jobType === undefined) return null;
  if (!jobTypeNames().includes(jobType))
    throw new Error(`no job type ${jobType} (job types: ${jobTypeNames().join(', ')})`);
  return jobType;
}

/**
 * `admissions hold|release|status`: during an incident, new jobs (of one type, or all) are
 * recorded and answered as usual but not admitted until the release; jobs admitted before go on.
 */
export function addAdmissionHoldCommands(program: Command): void {
  const admissions = program
    .command('admissions')
    .description('Hold or release the admission of new jobs during an incident');
  for (const [verb, change, description] of [
    [
      'hold',
      'held',
      'Hold admission: new jobs are recorded and answered as usual, and wait until the release',
    ],
    ['release', 'released', 'Release a hold: the jobs it held are admitted'],
  ] as const)
    admissions
      .command(verb)
      .description(description)
      .option('--job-type <type>', 'only jobs of this type (default: every type)')
      .requiredOption('--reason <text>', 'why, for the record and the jobs’ notes')
      .option('--operator <name>', 'who (default: $USER)')
      .action(async (options: { jobType?: string; reason: string; operator?: string }) => {
        // Only a hold must name a job type onejob has; a release lifts whatever is held.
        const jobType = change === 'held' ? scopeOf(options.jobType) : (options.jobType ?? null);
        await withPool(async (pool) => {
          const recorded = await changeAdmissionHold(pool, {
            jobType,
            change,
            by: operatorName(options.operator),
            reason: options.reason,
          });
          console.log(
            `admission of ${jobType ?? 'every job type'} ${change} at ${recorded.at.toISOString()}`,
          );
        });
      });
  admissions
    .command('status')
    .description('The admission holds in force: which job types, since when, by whom, why')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withPool(async (pool) => {
        const holds = await listAdmissionHolds(pool);
        output(
          options.json,
          holds.map((h) => ({ ...h, heldAt: h.heldAt.toISOString() })),
          () =>
            holds.length === 0
              ? 'no admission is held'
              : renderTable(
                  ['job type', 'since', 'by', 'why'],
                  holds.map((h) => [
                    h.jobType ?? '(every type)',
                    h.heldAt.toISOString(),
                    h.heldBy,
                    h.reason,
                  ]),
                ),
        );
      });
    });
}
