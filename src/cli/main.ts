#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { certificationPlan, certifyMany, type CertificationReport } from '../certification/certify';
import { migrate } from '../db/migrate';
import { terminalText } from '../domain/displayText';
import { findJobType, jobTypeNames } from '../jobTypes';
import { ProviderRegistry, providerConfigsFromEnv } from '../providers/registry';
import { ServiceError } from '../service/errors';
import { addOperatorCommands, withPool } from './operatorCommands';
import { renderTable } from './table';
import { terminalJson } from './terminal';

/** `onejob`: the operator CLI. It uses the same services as the API; errors are one line. */
function printReports(reports: CertificationReport[]): void {
  console.log(
    renderTable(
      ['provider', 'model', 'job type', 'contract', 'verdict', 'cases', 'tokenizer', 'why not'],
      reports.map((r) => [
        r.provider,
        r.model,
        r.jobType,
        r.contractVersion,
        r.passed ? 'CERTIFIED' : 'FAILED',
        `${r.cases.filter((c) => c.passed).length}/${r.cases.length}`,
        r.tokenizer,
        [
          ...r.cases.filter((c) => !c.passed).map((c) => `${c.case}: ${c.reason}`),
          ...(r.outputCap && !r.outputCap.passed ? [`output cap: ${r.outputCap.detail}`] : []),
        ].join('; '),
      ]),
    ),
  );
}

export function buildCli(): Command {
  const program = new Command('onejob')
    .description('Operate onejob: providers, jobs, attempts.')
    .exitOverride();
  addOperatorCommands(program);
  const providers = program
    .command('providers')
    .description('Provider adapters and their certification');
  providers
    .command('certify')
    .description("Run the job types' golden cases through providers and store the verdicts")
    .option('--provider <name>', 'only this provider (default: all configured)')
    .option('--job-type <type>', `only this job type (${jobTypeNames().join(', ')})`)
    .option('--json', 'print the reports as JSON')
    .action(async (options: { provider?: string; jobType?: string; json?: boolean }) => {
      const registry = new ProviderRegistry(providerConfigsFromEnv());
      if (options.provider && !registry.has(options.provider))
        throw new Error(
          `unknown provider ${options.provider} (known: ${registry.names().join(', ')})`,
        );
      const jobType = options.jobType === undefined ? undefined : findJobType(options.jobType);
      if (options.jobType !== undefined && !jobType)
        throw new Error(
          `unknown job type ${options.jobType} (known: ${jobTypeNames().join(', ')})`,
        );
      const chosen = certificationPlan(registry, { provider: options.provider, jobType });
      if (chosen.length === 0) throw new Error('no provider can run the chosen job type');
      await withPool(async (pool) => {
        await migrate(pool);
        const reports = await certifyMany({
          db: pool,
          providers: chosen,
          onProgress: options.json ? undefined : (line) => console.error(`certifying ${line}`),
        });
        if (options.json) console.log(terminalJson(reports));
        else printReports(reports);
        if (reports.some((r) => !r.passed)) process.exitCode = 2;
      });
    });
  return program;
}

if (require.main === module) {
  buildCli()
    .parseAsync(process.argv)
    .catch((error: unknown) => {
      if (error instanceof CommanderError) process.exit(error.exitCode);
      const problem = error instanceof ServiceError ? ` (${error.problemType})` : '';
      console.error(terminalText(`onejob: ${(error as Error).message}${problem}`));
      process.exit(1);
    });
}
