import type { Command } from 'commander';
import { changeProviderHold, type ProviderHoldChange } from '../db/providerHolds';
import { configuredProviders, operatorName, output, withPool } from './commandContext';
import { renderTable } from './table';

/** A provider name to hold or release: one of the configured ones when this shell knows them. */
function providerName(name: string): string {
  const configured = configuredProviders();
  if (configured.length > 0 && !configured.includes(name))
    throw new Error(`no provider ${name} is configured (configured: ${configured.join(', ')})`);
  return name;
}

function printChange(json: boolean | undefined, change: ProviderHoldChange): void {
  output(json, change, () =>
    renderTable(
      ['provider', 'change', 'at', 'by', 'why'],
      [[change.provider, change.change, change.at.toISOString(), change.changedBy, change.reason]],
    ),
  );
}

/**
 * `providers hold|release`: an operator's breaker, open until released. Every worker honours it
 * from the next attempt on (no new attempt, no probe); attempts already made are still
 * reconciled; jobs that would have used it go to their fallbacks, or wait and say why.
 */
export function addProviderHoldCommands(providers: Command): void {
  for (const [verb, change, description] of [
    ['hold', 'held', 'Hold a provider: no new attempt of any job goes to it until it is released'],
    ['release', 'released', 'Release a held provider: its jobs may use it again'],
  ] as const)
    providers
      .command(`${verb} <provider>`)
      .description(description)
      .requiredOption('--reason <text>', 'why, for the record and the jobs’ notes')
      .option('--operator <name>', 'who (default: $USER)')
      .option('--json', 'print JSON')
      .action(
        async (
          provider: string,
          options: { reason: string; operator?: string; json?: boolean },
        ) => {
          // A release needs no such check: a provider removed from the configuration while held
          // must still be releasable.
          const name = change === 'held' ? providerName(provider) : provider;
          await withPool(async (pool) => {
            printChange(
              options.json,
              await changeProviderHold(pool, {
                provider: name,
                change,
                by: operatorName(options.operator),
                reason: options.reason,
              }),
            );
          });
        },
      );
}
