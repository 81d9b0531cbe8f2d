/**
 * `jobs list|show|trace|cancel|pause|unpause|release-key`: what operators do to any owner's jobs
 * by hand.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { listJobsForOperators } from '../db/jobLists';
import { terminalText } from '../domain/displayText';
import { isUuid } from '../domain/identity';
import { JOB_STATUSES, type JobStatus } from '../domain/job';
import { cancelJob } from '../service/attempts';
import { jobResource } from '../service/jobDocument';
import { releaseKey } from '../service/keyRelease';
import { setJobWorkflowPaused, type PauseAction } from '../service/workflowPause';
import { addBulkCancelCommand } from './bulkCancelCommand';
import { cliLogger, operatorName, output, withPool, withServices } from './commandContext';
import { addJobShowCommand } from './jobShowCommand';
import { renderTable } from './table';
import { chooseTraceQuery, findJobTraces } from './traceQuery';
import { renderTraces } from './traceTree';

/** A count given on the command line: a whole number above zero, else a one-line refusal. */
function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InvalidArgumentError('give a whole number above zero');
  return parsed;
}

/** Adds the `jobs` command and its subcommands. */
export function addJobCommands(program: Command): void {
  const jobs = program.command('jobs').description('Find, inspect and cancel jobs (any owner)');
  addBulkCancelCommand(jobs);
  jobs
    .command('list')
    .description('Newest jobs first')
    .option('--owner <owner>', 'only this owner')
    .addOption(new Option('--status <status>', 'only this status').choices([...JOB_STATUSES]))
    .option('--limit <n>', 'how many', (v) => Number.parseInt(v, 10), 20)
    .option('--json', 'print JSON')
    .action(
      async (options: { owner?: string; status?: JobStatus; limit: number; json?: boolean }) => {
        await withPool(async (pool) => {
          const found = await listJobsForOperators(pool, {
            ownerId: options.owner,
            status: options.status,
            limit: options.limit,
          });
          output(
            options.json,
            found.map((job) => jobResource(job, undefined, 'operator')),
            () =>
              renderTable(
                ['job', 'owner', 'type', 'status', 'attempts', 'created'],
                found.map((job) => [
                  job.id,
                  job.ownerId,
                  job.type,
                  job.status,
                  String(job.attemptCount),
                  job.createdAt.toISOString(),
                ]),
              ),
          );
        });
      },
    );
  addJobShowCommand(jobs);
  jobs
    .command('trace <jobId>')
    .description(
      "A job's traces from the trace query API (Jaeger): each span with its duration, provider, attempt, outcome, cost and compare-and-swap",
    )
    .option('--json', "print the traces as Jaeger's query API answered them")
    .option('--limit <n>', 'traces per service at most', positiveInteger, 20)
    .option('--days <n>', 'how far back to look', positiveInteger, 7)
    .action(async (jobId: string, options: { json?: boolean; limit: number; days: number }) => {
      // Refused before any request: a job id is a UUID, and anything else would be sent as a tag.
      if (!isUuid(jobId)) throw new Error(`${jobId} is not a job id (a UUID)`);
      const found = await findJobTraces(chooseTraceQuery(), jobId, {
        lookbackDays: options.days,
        limitPerService: options.limit,
      });
      for (const service of found.fullServices)
        console.error(
          terminalText(
            `onejob: ${service} had ${options.limit} traces of the job, the limit: older ones may be left out (--limit)`,
          ),
        );
      output(options.json, found.traces, () => renderTraces(found.traces));
    });
  jobs
    .command('cancel <jobId>')
    .description('Cancel a job; results that still arrive are discarded and logged')
    .requiredOption('--reason <text>', 'why, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(async (jobId: string, options: { reason: string; operator?: string }) => {
      await withServices(async (deps) => {
        const status = await cancelJob(deps, jobId, {
          operator: operatorName(options.operator),
          reason: options.reason,
        });
        if (!status) throw new Error(`no job ${jobId}`);
        console.log(`job ${jobId} is ${status.status}`);
      });
    });

  const pauseHelp: Record<PauseAction, string> = {
    pause:
      "Pause the job's workflow in Temporal (1.30+): nothing of it runs, and every action on the job is refused (409 workflow-paused) until it is unpaused",
    unpause: "Unpause the job's workflow in Temporal: it goes on where it stopped",
  };
  for (const action of ['pause', 'unpause'] as const)
    jobs
      .command(`${action} <jobId>`)
      .description(pauseHelp[action])
      .requiredOption('--reason <text>', 'why, for the record (Temporal keeps it on the event)')
      .option('--operator <name>', 'who (default: $USER)')
      .action(async (jobId: string, options: { reason: string; operator?: string }) => {
        await withServices(async (deps) => {
          const done = await setJobWorkflowPaused(deps, jobId, action, {
            operator: operatorName(options.operator),
            reason: options.reason,
          });
          if (!done) throw new Error(`no job ${jobId}`);
          console.log(`job ${jobId}: workflow ${done.workflowId} ${action}d`);
        });
      });

  jobs
    .command('release-key <jobId>')
    .description(
      "Release an ended job's Idempotency-Key: the owner's next create with it makes a new job",
    )
    .requiredOption('--reason <text>', 'why, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(async (jobId: string, options: { reason: string; operator?: string }) => {
      await withPool(async (pool) => {
        const logger = cliLogger();
        const released = await releaseKey(
          { pool, logger },
          operatorName(options.operator),
          jobId,
          options.reason,
        );
        if (!released) throw new Error(`no job ${jobId}`);
        console.log(
          terminalText(
            `job ${jobId}: key ${released.idempotencyKey} released by ${released.keyRelease?.operator}; the next create with it makes generation ${released.keyGeneration + 1}`,
          ),
        );
      });
    });
}
