import type { Command } from 'commander';
import { senderDeps } from '../service/attempts';
import { redeliverWebhooks } from '../service/webhookRedelivery';
import { operatorName, output, timeOption, withServices } from './commandContext';
import { renderTable } from './table';

/** `webhooks redeliver`: an operator sends events again to any owner's endpoint. */
export function addRedeliverCommand(webhooks: Command): void {
  webhooks
    .command('redeliver <endpointId>')
    .description(
      'Send events again to an endpoint, with the same webhook-id and bytes: one delivery’s event, or every failed delivery since a time',
    )
    .option('--delivery <id>', 'the event of this delivery')
    .option(
      '--failed-since <time>',
      'every event undelivered (failed, or abandoned while disabled) since this ISO 8601 time',
    )
    .requiredOption('--reason <text>', 'why, kept on each new delivery')
    .option('--operator <name>', 'who (default: $USER)')
    .option('--json', 'print JSON')
    .action(
      async (
        endpointId: string,
        options: {
          delivery?: string;
          failedSince?: string;
          reason: string;
          operator?: string;
          json?: boolean;
        },
      ) => {
        if ((options.delivery === undefined) === (options.failedSince === undefined))
          throw new Error('give either --delivery or --failed-since');
        const since =
          options.failedSince === undefined
            ? undefined
            : timeOption('--failed-since', options.failedSince);
        await withServices(async (deps) => {
          const answer = await redeliverWebhooks(senderDeps(deps), {
            endpointId,
            selection: since ? { failedSince: since } : { deliveryId: options.delivery! },
            by: `operator:${operatorName(options.operator)}`,
            reason: options.reason,
          });
          if (!answer)
            throw new Error(
              options.delivery
                ? `no delivery ${options.delivery} to endpoint ${endpointId}`
                : `no live endpoint ${endpointId}`,
            );
          output(options.json, answer, () =>
            [
              `${answer.redelivered.length} events sent again${answer.more ? ' (the bound was reached: run it again for the rest)' : ''}`,
              renderTable(
                ['new delivery', 'webhook-id', 'job'],
                answer.redelivered.map((r) => [r.id, r.redeliveryOf, r.jobId]),
              ),
            ].join('\n'),
          );
        });
      },
    );
}
