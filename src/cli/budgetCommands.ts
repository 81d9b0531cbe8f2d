import type { Command } from 'commander';
import { allBudgets, budgetsOfOwner, BudgetCurrencyChange, changeBudget } from '../db/budgets';
import { BUDGET_PERIODS, type BudgetPeriod, type BudgetScope } from '../domain/budgets';
import { currencyCode, numberAtLeast, operatorName, output, withPool } from './commandContext';
import { renderTable } from './table';

function periodOf(text: string): BudgetPeriod {
  if ((BUDGET_PERIODS as readonly string[]).includes(text)) return text as BudgetPeriod;
  throw new Error(`--period must be ${BUDGET_PERIODS.join(' or ')}, not ${JSON.stringify(text)}`);
}

interface ScopeOptions {
  period: string;
  jobType?: string;
  reason: string;
  operator?: string;
}

const scopeOf = (owner: string, options: ScopeOptions): BudgetScope => ({
  ownerId: owner,
  jobType: options.jobType ?? null,
  period: periodOf(options.period),
});

/** `budgets list|set|remove`: owners' budgets per job type and UTC day or month. */
export function addBudgetCommands(program: Command): void {
  const budgets = program
    .command('budgets')
    .description("Owners' budgets: what their calls may cost per UTC day or month");

  budgets
    .command('list')
    .description('Each budget with what its current period has reserved, spent and left')
    .option('--owner <owner>', 'only this owner')
    .option('--json', 'print JSON')
    .action(async (options: { owner?: string; json?: boolean }) => {
      await withPool(async (pool) => {
        const rows = options.owner
          ? await budgetsOfOwner(pool, options.owner)
          : await allBudgets(pool);
        output(options.json, rows, () =>
          renderTable(
            [
              'owner',
              'job type',
              'period',
              'budget',
              'spent',
              'reserved',
              'left',
              'holding',
              'set by',
            ],
            rows.map((b) => [
              b.ownerId,
              b.jobType ?? '(all)',
              `${b.period} from ${b.periodStart.slice(0, 10)}`,
              `${b.currency} ${b.amount}`,
              String(b.spent),
              String(b.reserved),
              String(b.left),
              String(b.attemptsHolding),
              `${b.setBy}: ${b.reason}`,
            ]),
          ),
        );
      });
    });

  budgets
    .command('set <owner>')
    .description("Set an owner's budget; it holds from the next attempt on")
    .requiredOption('--period <period>', 'day or month (UTC)')
    .requiredOption('--amount <amount>', 'what calls may cost in a period')
    .requiredOption('--currency <code>', 'ISO 4217, the currency of the providers it counts')
    .option('--job-type <type>', 'only jobs of this type (default: every type)')
    .requiredOption('--reason <text>', 'why, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(async (owner: string, options: ScopeOptions & { amount: string; currency: string }) => {
      const currency = currencyCode(options.currency);
      const scope = scopeOf(owner, options);
      const figures = { currency, amount: numberAtLeast('--amount', options.amount, 0) };
      await withPool(async (pool) => {
        try {
          const by = { actor: operatorName(options.operator), reason: options.reason };
          const changed = await changeBudget(pool, scope, figures, by);
          console.log(changed ? `budget set for ${owner}` : `budget for ${owner} unchanged`);
        } catch (error) {
          if (error instanceof BudgetCurrencyChange) throw new Error(error.message);
          throw error;
        }
      });
    });

  budgets
    .command('remove <owner>')
    .description("Remove an owner's budget")
    .requiredOption('--period <period>', 'day or month (UTC)')
    .option('--job-type <type>', 'the budget of this job type (default: the one for every type)')
    .requiredOption('--reason <text>', 'why, for the record')
    .option('--operator <name>', 'who (default: $USER)')
    .action(async (owner: string, options: ScopeOptions) => {
      const scope = scopeOf(owner, options);
      await withPool(async (pool) => {
        const by = { actor: operatorName(options.operator), reason: options.reason };
        const changed = await changeBudget(pool, scope, null, by);
        console.log(changed ? `budget removed for ${owner}` : `${owner} had no such budget`);
      });
    });
}
