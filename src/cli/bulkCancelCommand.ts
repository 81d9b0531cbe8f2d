import type { Command } from 'commander';
import type { OpenJobQuery } from '../db/bulkCancels';
import { isUuid } from '../domain/identity';
import { applyBulkCancel, planBulkCancel } from '../service/bulkCancel';
import {
  numberAtLeast,
  operatorName,
  output,
  timeOption,
  withPool,
  withServices,
} from './commandContext';
import { renderTable } from './table';

const OPEN_STATUSES = ['pending', 'running', 'unknown'] as const;
/** The most jobs one run cancels. */
const MAX_LIMIT = 10_000;

interface Options {
  owner?: string;
  provider?: string;
  status?: string;
  createdAfter?: string;
  createdBefore?: string;
  after?: string;
  limit: string;
  apply?: boolean;
  reason?: string;
  operator?: string;
  json?: boolean;
}

function queryOf(options: Options): OpenJobQuery {
  const status = options.status;
  if (status !== undefined && !(OPEN_STATUSES as readonly string[]).includes(status))
    throw new Error(`--status is one of ${OPEN_STATUSES.join(', ')} (open jobs), not ${status}`);
  const query: OpenJobQuery = {
    ...(options.owner ? { ownerId: options.owner } : {}),
    ...(options.provider ? { provider: options.provider } : {}),
    ...(status ? { status: status as OpenJobQuery['status'] } : {}),
    ...(options.createdAfter
      ? { createdAfter: timeOption('--created-after', options.createdAfter) }
      : {}),
    ...(options.createdBefore
      ? { createdBefore: timeOption('--created-before', options.createdBefore) }
      : {}),
  };
  if (options.after !== undefined && !isUuid(options.after))
    throw new Error(`--after takes a job id (the \`next\` a run printed), not ${options.after}`);
  // A query that names nothing would cancel every open job: say so on purpose or not at all.
  if (Object.keys(query).length === 0)
    throw new Error('name at least one of --owner, --provider, --status, --created-after/before');
  return options.after ? { ...query, afterJobId: options.after } : query;
}

/**
 * `jobs cancel-many`: the open jobs a query finds, listed (a dry run) or cancelled with --apply,
 * at most --limit per run, each through the single cancel path, the run recorded. Running it
 * again takes up what is left.
 */
export function addBulkCancelCommand(jobs: Command): void {
  jobs
    .command('cancel-many')
    .description('Cancel the open jobs a query finds: a dry run unless --apply; bounded, resumable')
    .option('--owner <owner>', 'jobs of this owner')
    .option('--provider <name>', 'jobs whose plan names this provider')
    .option('--status <status>', 'pending, running or unknown')
    .option('--created-after <time>', 'created at or after this ISO 8601 time')
    .option('--created-before <time>', 'created before this ISO 8601 time')
    .option(
      '--after <job id>',
      'only jobs after this one (the `next` a run printed): passes over those it could not cancel',
    )
    .option('--limit <n>', 'at most this many per run', '500')
    .option('--apply', 'cancel them (default: list them only)')
    .option('--reason <text>', 'why, for each job’s record (needed with --apply)')
    .option('--operator <name>', 'who (default: $USER)')
    .option('--json', 'print JSON')
    .action(async (options: Options) => {
      const query = queryOf(options);
      const limit = numberAtLeast('--limit', options.limit, 1);
      if (!Number.isInteger(limit) || limit > MAX_LIMIT)
        throw new Error(
          `--limit takes a whole number from 1 to ${MAX_LIMIT}, not ${options.limit}`,
        );
      if (options.apply && !options.reason?.trim()) throw new Error('--apply needs --reason');
      const table = (
        rows: Array<{
          id: string;
          ownerId: string;
          type: string;
          status: string;
          createdAt: Date;
          result?: string;
          detail?: string;
        }>,
      ) =>
        renderTable(
          ['job', 'owner', 'type', 'status', 'created', ...(options.apply ? ['result'] : [])],
          rows.map((job) => [
            job.id,
            job.ownerId,
            job.type,
            job.status,
            job.createdAt.toISOString(),
            ...(options.apply ? [`${job.result}: ${job.detail}`] : []),
          ]),
        );
      if (!options.apply) {
        const plan = await withPool((pool) => planBulkCancel({ pool }, query, limit));
        output(options.json, plan, () =>
          [
            `${plan.jobs.length} open jobs match${plan.more ? ` (more than --limit ${limit})` : ''} — dry run: nothing was changed (add --apply)`,
            table(plan.jobs),
          ].join('\n'),
        );
        return;
      }
      await withServices(async (deps) => {
        const run = await applyBulkCancel(deps, query, limit, {
          operator: operatorName(options.operator),
          reason: options.reason!,
        });
        const cancelled = run.jobs.filter((j) => j.result === 'cancelled').length;
        const refused = run.jobs.length - cancelled;
        output(options.json, run, () =>
          run.runId === null
            ? 'no open job matches: nothing was recorded'
            : [
                `bulk cancel ${run.runId}: ${cancelled} cancelled, ${refused} refused${run.more ? `; more match: run it again with --after ${run.next}${refused > 0 ? ' (it passes over the refused)' : ''}` : ''}`,
                table(run.jobs),
              ].join('\n'),
        );
      });
    });
}
