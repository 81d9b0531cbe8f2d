#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { certificationPlan, certifyMany, type CertificationReport } from '../certification/certify';
import { migrate } from '../db/migrate';
import { listProviderHealth, recentProviderActivity } from '../db/providerHealth';
import { listProviderHolds } from '../db/providerHolds';
import { terminalText } from '../domain/displayText';
import { findJobType, jobTypeNames } from '../jobTypes';
import { ProviderRegistry, providerConfigsFromEnv } from '../providers/registry';
import { ServiceError } from '../service/errors';
import { addAdmissionHoldCommands } from './admissionHoldCommands';
import { addBudgetCommands } from './budgetCommands';
import { addCeilingCommands } from './ceilingCommands';
import { configuredProviders, withPool } from './commandContext';
import { eligibilityStatus, renderEligibility } from './eligibilityStatus';
import { addOperatorCommands } from './operatorCommands';
import { addProviderHoldCommands } from './providerHoldCommands';
import { addSecretCommands } from './secretCommands';
import { renderTable } from './table';
import { terminalJson } from './terminal';
import { addWebhookCommands } from './webhookCommands';

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
  addSecretCommands(program);
  addWebhookCommands(program);
  addBudgetCommands(program);
  addCeilingCommands(program);
  addAdmissionHoldCommands(program);
  const providers = program
    .command('providers')
    .description('Provider adapters, their certification, health and holds');
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
  providers
    .command('status')
    .description(
      'Each provider’s hold, circuit breaker, cooldown, failed calls and retries in the last 5 minutes, and lost fallback eligibility',
    )
    .option('--json', 'print JSON')
    .option('--history', 'also every change of fallback and hedge eligibility')
    .action(async (options: { json?: boolean; history?: boolean }) => {
      // The configured providers when this shell has their settings; the database's otherwise.
      const configured = configuredProviders();
      await withPool(async (pool) => {
        const health = await listProviderHealth(pool);
        const holds = await listProviderHolds(pool);
        const activity = await recentProviderActivity(pool, RECENT_WINDOW_MS);
        const eligibility = await eligibilityStatus(pool, options.history === true);
        const names = [
          ...new Set([
            ...configured,
            ...health.map((h) => h.provider),
            ...holds.map((h) => h.provider),
            ...activity.keys(),
            ...eligibility.byProvider.keys(),
          ]),
        ].sort();
        const now = Date.now();
        const statuses = names.map((provider) => {
          const row = health.find((h) => h.provider === provider);
          const cooling = row?.cooldownUntil && row.cooldownUntil.getTime() > now;
          const hold = holds.find((h) => h.provider === provider);
          return {
            provider,
            held: hold
              ? { by: hold.heldBy, since: hold.heldAt.toISOString(), reason: hold.reason }
              : null,
            breaker: row?.breaker ?? 'closed',
            openedAt: row?.openedAt?.toISOString() ?? null,
            reason: row?.breaker === 'closed' ? null : (row?.reason ?? null),
            probeAttemptId: row?.probeAttemptId ?? null,
            cooldownUntil: cooling ? row.cooldownUntil!.toISOString() : null,
            recentFailures: activity.get(provider)?.failures ?? 0,
            recentRetries: activity.get(provider)?.retries ?? 0,
            lostEligibility: eligibility.byProvider.get(provider) ?? [],
          };
        });
        if (options.json) {
          console.log(
            terminalJson(
              eligibility.history
                ? { providers: statuses, history: eligibility.history }
                : statuses,
            ),
          );
          return;
        }
        console.log(
          renderTable(
            [
              'provider',
              'held',
              'breaker',
              'since',
              'cooldown until',
              'failures 5m',
              'retries 5m',
              'why',
            ],
            statuses.map((s) => [
              s.provider,
              s.held ? `by ${s.held.by} since ${s.held.since}: ${s.held.reason}` : '-',
              s.breaker,
              s.breaker === 'closed' ? '-' : (s.openedAt ?? '-'),
              s.cooldownUntil ?? '-',
              String(s.recentFailures),
              String(s.recentRetries),
              s.breaker === 'half_open' ? `probe ${s.probeAttemptId ?? '?'}` : (s.reason ?? ''),
            ]),
          ),
        );
        const lost = renderEligibility(eligibility);
        if (lost) console.log(lost);
      });
    });
  addProviderHoldCommands(providers);
  return program;
}

/** What `providers status` counts as recent. */
const RECENT_WINDOW_MS = 5 * 60_000;

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
