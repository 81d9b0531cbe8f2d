import { Client, Connection } from '@temporalio/client';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { taskQueueSetting } from '../config';
import { listAttempts } from '../db/attempts';
import { listJobsForOperators } from '../db/jobLists';
import { findJob } from '../db/jobs';
import { createPool, type Pool } from '../db/pool';
import { listRaces } from '../db/races';
import { deliveriesOfJob, type DeliveryRecord } from '../db/webhooks';
import { describeJobCost, formatMoney } from '../domain/cost';
import { terminalText } from '../domain/displayText';
import { isUuid } from '../domain/identity';
import { JOB_STATUSES, type JobStatus } from '../domain/job';
import { createLogger } from '../logger';
import { cancelJob, resolveAttempt, type AttemptServiceDeps } from '../service/attempts';
import { jobResource } from '../service/jobDocument';
import { releaseKey } from '../service/keyRelease';
import { webhookRetrySettings } from '../settings/webhooks';
import { temporalConnectionSettings, temporalConnectOptions } from '../temporal/connection';
import { chooseDatabase, explainConnectionFailure } from './database';
import { renderTable } from './table';
import { terminalJson } from './terminal';
import { chooseTraceQuery, findJobTraces } from './traceQuery';
import { renderTraces } from './traceTree';

/** A job's note in one line: what happened, why, and until when for a wait. */
function noteText(note: unknown): string {
  const fields = (typeof note === 'object' && note !== null ? note : {}) as Record<string, unknown>;
  const event = typeof fields.event === 'string' ? fields.event : 'note';
  const reason = typeof fields.reason === 'string' ? `: ${fields.reason}` : '';
  const until = typeof fields.retryAt === 'string' ? ` (until ${fields.retryAt})` : '';
  return `  ${event}${reason}${until}`;
}

/** One database pool per command run, closed when it ends; for commands that need no Temporal. */
export async function withPool<T>(work: (pool: Pool) => Promise<T>): Promise<T> {
  const choice = chooseDatabase();
  if (choice.notice) console.error(`onejob: ${choice.notice}`);
  const pool = createPool(choice.url, { max: 2 });
  try {
    return await work(pool);
  } catch (error) {
    throw explainConnectionFailure(error, choice);
  } finally {
    await pool.end();
  }
}

/**
 * One database pool and Temporal client per command run, closed when it ends; with the job task
 * queue and webhook retries the services are configured with (for a job that has no workflow,
 * the CLI starts its webhook senders itself).
 */
async function withServices<T>(work: (deps: AttemptServiceDeps) => Promise<T>): Promise<T> {
  return withPool(async (pool) => {
    const settings = temporalConnectionSettings();
    const connection = await Connection.connect(temporalConnectOptions(settings));
    try {
      const temporal = new Client({ connection, namespace: settings.namespace });
      return await work({
        pool,
        temporal,
        logger: createLogger('onejob-cli', process.env.LOG_LEVEL ?? 'warn'),
        taskQueue: taskQueueSetting(),
        webhookRetry: webhookRetrySettings(),
      });
    } finally {
      await connection.close();
    }
  });
}

export function output(json: boolean | undefined, value: unknown, table: () => string): void {
  // What providers, models and owners wrote is shown, never obeyed by the terminal.
  console.log(json ? terminalJson(value) : terminalText(table()));
}

/** A count given on the command line: a whole number above zero, else a one-line refusal. */
function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InvalidArgumentError('give a whole number above zero');
  return parsed;
}

/** Who acts, for the record: --operator, else the shell's user. */
export const operatorName = (given?: string): string => given ?? process.env.USER ?? 'cli';
const errorText = (error: unknown): string =>
  error ? String((error as { message?: string }).message ?? JSON.stringify(error)) : '';

/** `jobs list|show|trace|cancel|release-key`, `attempts resolve`, `races list`: what operators do by hand. */
export function addOperatorCommands(program: Command): void {
  const jobs = program.command('jobs').description('Find, inspect and cancel jobs (any owner)');
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
  jobs
    .command('show <jobId>')
    .description('A job with its attempts, lost races and webhook deliveries')
    .option('--json', 'print JSON')
    .action(async (jobId: string, options: { json?: boolean }) => {
      await withPool(async (pool) => {
        // An id that is not a job id (22P02) is no job; any other failure is reported as it is.
        const job = await findJob(pool, jobId).catch((error: { code?: string }) => {
          if (error.code === '22P02') return undefined;
          throw error;
        });
        if (!job) throw new Error(`no job ${jobId}`);
        const attempts = await listAttempts(pool, job.id);
        const races = await listRaces(pool, { jobId: job.id, limit: 100 });
        // Every one, page after page: an operator looking at one job sees all it sent.
        const webhookDeliveries: DeliveryRecord[] = [];
        for (let after: number | undefined; ;) {
          const page = await deliveriesOfJob(pool, job.id, { limit: 100, afterPosition: after });
          webhookDeliveries.push(...page.deliveries);
          if (page.nextPosition === undefined) break;
          after = page.nextPosition;
        }
        const resource = jobResource(job, attempts, 'operator');
        output(options.json, { ...resource, races, webhookDeliveries }, () =>
          [
            `job ${job.id}  ${job.type}  ${job.status}  owner ${job.ownerId}  key ${job.idempotencyKey}`,
            `workflow ${job.workflowId}  version ${job.version}  completed by ${job.completedBy ?? '-'}`,
            resource.cost ? describeJobCost(resource.cost) : '',
            '',
            renderTable(
              ['attempt', 'provider', 'state', 'call', 'tokens in/out', 'cost', 'error'],
              attempts.map((a) => [
                a.id,
                a.provider,
                a.state,
                a.callOutcome ?? '-',
                a.usage
                  ? `${a.usage.inputTokens ?? '?'}/${a.usage.outputTokens ?? '?'}`
                  : a.startedAt
                    ? '?'
                    : '-',
                a.cost
                  ? formatMoney(a.cost.amount, a.cost.currency)
                  : a.startedAt
                    ? 'unknown'
                    : '-',
                errorText(a.error),
              ]),
            ),
            ...(races.length > 0
              ? ['', `lost races: ${races.map((r) => r.losingAttemptId).join(', ')}`]
              : []),
            ...(webhookDeliveries.length > 0
              ? [
                  '',
                  'webhook deliveries:',
                  renderTable(
                    ['webhook-id', 'event', 'endpoint', 'state', 'tries', 'last answer'],
                    webhookDeliveries.map((d) => {
                      const last = d.tries.at(-1);
                      return [
                        d.id,
                        d.event,
                        d.endpointId,
                        d.state,
                        String(d.tries.length),
                        last ? (last.error ?? String(last.status)) : (d.lastError ?? '-'),
                      ];
                    }),
                  ),
                ]
              : []),
            // What the workflow noted on its way: skipped providers, retries and their waits.
            ...(job.notes.length > 0 ? ['', 'notes:', ...job.notes.map(noteText)] : []),
          ].join('\n'),
        );
      });
    });
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

  jobs
    .command('release-key <jobId>')
    .description(
      "Release an ended job's Idempotency-Key: the owner's next create with it makes a new job",
    )
    .requiredOption('--reason <text>', 'why, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(async (jobId: string, options: { reason: string; operator?: string }) => {
      await withPool(async (pool) => {
        const logger = createLogger('onejob-cli', process.env.LOG_LEVEL ?? 'warn');
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

  program
    .command('attempts')
    .description('Settle attempts')
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
