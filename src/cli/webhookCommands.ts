import type { Command } from 'commander';
import {
  listAllEndpoints,
  listOperatorWebhookActions,
  type OperatorEndpoint,
  type OperatorWebhookAction,
} from '../db/webhookOperator';
import { terminalText } from '../domain/displayText';
import { operatorWebhookAction } from '../service/operatorWebhooks';
import { cliLogger, operatorName, output, withPool } from './commandContext';
import { addRedeliverCommand } from './redeliverCommand';
import { renderTable } from './table';

/** An endpoint's state in a word or two: on, or off and by whom. */
function endpointState(endpoint: OperatorEndpoint): string {
  if (endpoint.deletedAt) return 'deleted';
  if (!endpoint.disabledAt) return 'on';
  return endpoint.disabledByOperator ? 'disabled by an operator' : 'disabled';
}

/** As the API shows it: never a secret (the database read has none to show). */
const endpointJson = (endpoint: OperatorEndpoint): Record<string, unknown> => ({
  ...endpoint,
  disabledAt: endpoint.disabledAt?.toISOString() ?? null,
  createdAt: endpoint.createdAt.toISOString(),
  deletedAt: endpoint.deletedAt?.toISOString() ?? null,
});

/** `webhooks list|disable|enable|delete|redeliver|audit`: any owner's endpoints, and what operators did. */
export function addWebhookCommands(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("Any owner's webhook endpoints: list, disable, enable, delete; and the record");
  webhooks
    .command('list')
    .description('Live endpoints, oldest first (never their secrets)')
    .option('--owner <owner>', 'only this owner')
    .option('--limit <n>', 'how many', (v) => Number.parseInt(v, 10), 100)
    .option('--json', 'print JSON')
    .action(async (options: { owner?: string; limit: number; json?: boolean }) => {
      if (!(options.limit >= 1)) throw new Error('--limit takes a whole number from 1');
      await withPool(async (pool) => {
        const page = await listAllEndpoints(pool, {
          ownerId: options.owner,
          limit: options.limit,
        });
        output(options.json, page.endpoints.map(endpointJson), () =>
          renderTable(
            ['endpoint', 'owner', 'url', 'events', 'state', 'created'],
            page.endpoints.map((e) => [
              e.id,
              e.ownerId,
              e.url,
              e.events.join(','),
              endpointState(e),
              e.createdAt.toISOString(),
            ]),
          ),
        );
        if (page.next)
          console.error(`onejob: more than ${options.limit}; raise --limit or name an --owner`);
      });
    });

  const act = (action: OperatorWebhookAction, description: string): void => {
    webhooks
      .command(`${action} <endpointId>`)
      .description(description)
      .requiredOption('--reason <text>', 'why, for the record')
      .option('--operator <name>', 'who (default: $USER)')
      .action(async (endpointId: string, options: { reason: string; operator?: string }) => {
        await withPool(async (pool) => {
          const logger = cliLogger();
          const endpoint = await operatorWebhookAction(
            { pool, logger },
            operatorName(options.operator),
            action,
            endpointId,
            options.reason,
          );
          if (!endpoint) throw new Error(`no webhook endpoint ${endpointId}`);
          console.log(
            terminalText(
              `webhook endpoint ${endpoint.id} of ${endpoint.ownerId} is ${endpointState(endpoint)}`,
            ),
          );
        });
      });
  };
  act('disable', 'Send it nothing more; what waits is abandoned; its owner cannot enable it again');
  act('enable', 'Send it later events again (whoever disabled it)');
  act('delete', 'Delete it for its owner: nothing more is sent; what waits is abandoned');

  addRedeliverCommand(webhooks);

  webhooks
    .command('audit')
    .description('What operators did to endpoints, newest first: who, what, whose, why, when')
    .option('--endpoint <id>', 'only this endpoint')
    .option('--owner <owner>', "only this owner's endpoints")
    .option('--limit <n>', 'how many', (v) => Number.parseInt(v, 10), 50)
    .option('--json', 'print JSON')
    .action(
      async (options: { endpoint?: string; owner?: string; limit: number; json?: boolean }) => {
        if (!(options.limit >= 1)) throw new Error('--limit takes a whole number from 1');
        await withPool(async (pool) => {
          const { records } = await listOperatorWebhookActions(pool, {
            endpointId: options.endpoint,
            ownerId: options.owner,
            limit: options.limit,
          });
          output(
            options.json,
            records.map((r) => ({ ...r, at: r.at.toISOString() })),
            () =>
              renderTable(
                ['when', 'operator', 'action', 'endpoint', 'owner', 'reason'],
                records.map((r) => [
                  r.at.toISOString(),
                  r.operator,
                  r.action,
                  r.endpointId,
                  r.ownerId,
                  r.reason,
                ]),
              ),
          );
        });
      },
    );
}
