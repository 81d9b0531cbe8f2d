import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { terminalText } from '../domain/displayText';
import {
  reportMappingSchema,
  type ReportFormat,
  type ReportMapping,
} from '../domain/providerReport';
import { issueLines } from '../domain/zodIssues';
import {
  applyReportSettlement,
  planReportSettlement,
  type AppliedRow,
  type SettlementPlan,
} from '../service/reportSettlement';
import { operatorName, withPool, withServices } from './commandContext';
import { renderTable } from './table';
import { terminalJson } from './terminal';

const VERDICT_WORDS = {
  settle: 'to settle',
  already: 'already settled the same way',
  contradicts: 'contradicting what we hold',
  not_found: 'not found',
  in_flight: 'still in flight',
  unreadable: 'unreadable',
} as const;

async function mappingFrom(file: string): Promise<ReportMapping> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`--mapping ${file}: ${(error as Error).message}`);
  }
  const parsed = reportMappingSchema.safeParse(json);
  if (!parsed.success) throw new Error(`--mapping ${file}: ${issueLines(parsed.error).join('; ')}`);
  return parsed.data;
}

function formatOf(file: string, given?: string): ReportFormat {
  const format = given ?? (/\.(jsonl|ndjson)$/i.test(file) ? 'jsonl' : 'csv');
  if (format !== 'csv' && format !== 'jsonl')
    throw new Error(`--format must be csv or jsonl, not ${JSON.stringify(format)}`);
  return format;
}

function printPlan(plan: SettlementPlan, applying: boolean): void {
  const counts = Object.entries(VERDICT_WORDS)
    .map(([verdict, words]) => `${words}: ${plan.counts[verdict as keyof typeof VERDICT_WORDS]}`)
    .join(' · ');
  console.log(
    `${plan.rows.length} rows of ${plan.source} (sha256 ${plan.sha256.slice(0, 12)}) for provider ${plan.provider}${applying ? '' : ' — dry run: nothing was changed (add --apply)'}`,
  );
  console.log(counts);
  if (plan.unmentioned.count > 0)
    console.log(
      `unknown attempts of ${plan.provider} the report does not name: ${plan.unmentioned.count} (${plan.unmentioned.attemptIds.join(', ')}${plan.unmentioned.count > plan.unmentioned.attemptIds.length ? ', …' : ''})`,
    );
  console.log(
    terminalText(
      renderTable(
        ['line', 'attempt', 'verdict', 'says', 'why'],
        plan.rows.map((row) => [
          String(row.line),
          row.key ?? '-',
          VERDICT_WORDS[row.verdict],
          row.outcome ?? '-',
          row.detail,
        ]),
      ),
    ),
  );
}

function printApplied(settlementId: string | null, applied: AppliedRow[]): void {
  if (!settlementId) {
    console.log('nothing to settle: nothing was recorded');
    return;
  }
  const count = (result: AppliedRow['result']) => applied.filter((a) => a.result === result).length;
  console.log(
    `report settlement ${settlementId}: ${count('settled')} settled, ${count('held')} held until their calls can no longer land, ${count('refused')} refused`,
  );
  const refused = applied.filter((a) => a.result === 'refused');
  if (refused.length > 0)
    console.log(
      terminalText(
        renderTable(
          ['line', 'attempt', 'refused because'],
          refused.map((a) => [String(a.line), a.attemptId, a.detail]),
        ),
      ),
    );
}

/**
 * `attempts settle --from <report>`: unknown attempts settled from the provider's own export.
 * Without --apply it prints the plan and changes nothing; with it, one audited run settles what
 * the plan says through the single resolve path. Running it again changes nothing.
 */
export function addSettleCommand(attempts: Command): void {
  attempts
    .command('settle')
    .description(
      "Settle unknown attempts from a provider's own report (CSV or JSON lines): a dry run unless --apply",
    )
    .requiredOption('--from <file>', "the provider's export")
    .requiredOption('--provider <name>', 'the provider whose report it is')
    .requiredOption(
      '--mapping <file>',
      'JSON: which columns hold key, outcome, amount, id (and currency, account; succeeded/failed values; amountIn minor|major)',
    )
    .option('--format <format>', 'csv or jsonl (default: by the file name)')
    .option('--apply', 'settle what the plan says (default: print the plan only)')
    .option('--reason <text>', 'why, for the record (needed with --apply)')
    .option('--operator <name>', 'who (default: $USER)')
    .option('--json', 'print JSON')
    .action(
      async (options: {
        from: string;
        provider: string;
        mapping: string;
        format?: string;
        apply?: boolean;
        reason?: string;
        operator?: string;
        json?: boolean;
      }) => {
        if (options.apply && !options.reason?.trim()) throw new Error('--apply needs --reason');
        const format = formatOf(options.from, options.format);
        const mapping = await mappingFrom(options.mapping);
        const text = await readFile(options.from, 'utf8').catch((error: Error) => {
          throw new Error(`--from ${options.from}: ${error.message}`);
        });
        const report = {
          provider: options.provider,
          source: path.basename(options.from),
          text,
          format,
          mapping,
        };
        if (!options.apply) {
          const plan = await withPool((pool) => planReportSettlement({ pool }, report));
          if (options.json) console.log(terminalJson({ plan }));
          else printPlan(plan, false);
          return;
        }
        await withServices(async (deps) => {
          const plan = await planReportSettlement(deps, report);
          const outcome = await applyReportSettlement(deps, plan, {
            operator: operatorName(options.operator),
            reason: options.reason!,
          });
          if (options.json) console.log(terminalJson({ plan, ...outcome }));
          else {
            printPlan(plan, true);
            printApplied(outcome.settlementId, outcome.applied);
          }
          if (outcome.applied.some((a) => a.result === 'refused')) process.exitCode = 2;
        });
      },
    );
}
