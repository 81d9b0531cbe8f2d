/** `jobs show`: a job with its attempts, lost races, webhook deliveries and notes. */
import type { Command } from 'commander';
import { listAttempts } from '../db/attempts';
import { findJob } from '../db/jobs';
import { listRaces } from '../db/races';
import { deliveriesOfJob, type DeliveryRecord } from '../db/webhookDeliveries';
import { describeJobCost, formatMoney } from '../domain/cost';
import { jobResource } from '../service/jobDocument';
import { output, withPool } from './commandContext';
import { renderTable } from './table';

/** A job's note in one line: what happened, why, and until when for a wait. */
function noteText(note: unknown): string {
  const fields = (typeof note === 'object' && note !== null ? note : {}) as Record<string, unknown>;
  const event = typeof fields.event === 'string' ? fields.event : 'note';
  const reason = typeof fields.reason === 'string' ? `: ${fields.reason}` : '';
  const until = typeof fields.retryAt === 'string' ? ` (until ${fields.retryAt})` : '';
  return `  ${event}${reason}${until}`;
}

const errorText = (error: unknown): string =>
  error ? String((error as { message?: string }).message ?? JSON.stringify(error)) : '';

/** Adds `show <jobId>` to the `jobs` command. */
export function addJobShowCommand(jobs: Command): void {
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
}
