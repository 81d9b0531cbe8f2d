import type { CampaignReport } from './campaign';
import { INVARIANTS } from './invariants';

function counts(record: Record<string, number>): string {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([name, n]) => `${name} ${n}`).join(', ');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The campaign's report as a person reads it; the violations come with the seed to replay. */
export function formatReport(report: CampaignReport): string {
  const lines: string[] = [];
  const operations = Object.values(report.operations).reduce((a, b) => a + b, 0);
  lines.push(
    `seed ${report.seed} · engine ${report.engine}${report.temporalPostgres ? ` (Temporal's PostgreSQL ${report.temporalPostgres})` : ''} · traffic ${seconds(report.trafficMs)} · settling ${seconds(report.settleMs)} · ${operations} operations · ${report.requests} requests`,
  );
  lines.push(`operations:      ${counts(report.operations)}`);
  lines.push(`answers:         ${counts(report.statuses)}`);
  lines.push(`provider faults: ${counts(report.providerFaults)}`);
  lines.push(
    `process faults:  ${
      report.processFaults.length === 0
        ? 'none'
        : report.processFaults
            .map(
              (f) =>
                `${f.kind} ${f.target} at ${seconds(f.at)} (back after ${f.backAt === undefined ? '?' : seconds(f.backAt - f.at)}${f.error ? `, FAILED: ${f.error}` : ''})`,
            )
            .join('; ')
    }`,
  );
  for (const { target, at, partition, error } of report.processFaults) {
    if (!partition) continue;
    const { fault, heldMs, during, nearSideSaw, readyAfterHealMs } = partition;
    const how = Object.entries(fault)
      .filter(([key]) => key !== 'kind')
      .map(([key, value]) => `${key} ${String(value)}`);
    lines.push(
      `  partition ${target} at ${seconds(at)}: ${fault.kind}${how.length ? ` (${how.join(', ')})` : ''} for ${seconds(heldMs)}; the proxy saw ${during.accepted} connections (${during.reset} reset), ${during.bytesToServer} B to the server, ${during.bytesToClient} B back, ${during.held} B waiting at the heal; the near side said ${nearSideSaw.replace(/\s+/g, ' ')}; ${readyAfterHealMs === undefined ? `not ready after the heal${error ? ` (${error})` : ''}` : `ready ${seconds(readyAfterHealMs)} after the heal`}`,
    );
  }
  lines.push(`jobs:            ${counts(report.jobsByState)}`);
  lines.push(
    `race events ${report.raceEvents} · key releases ${report.keyReleases} · operator settlements ${report.operatorSettlements} after traffic, ${report.operatorSettlementsInTraffic} during · workflows checked ${report.workflowsChecked}`,
  );
  const { pauses } = report;
  lines.push(
    pauses.serverPauses
      ? `workflow pauses: ${pauses.cycles} paused and unpaused; ${pauses.cancelsWhilePaused} operator cancels while paused, ${pauses.refusedAsPaused} answered 409 workflow-paused`
      : 'workflow pauses: none (this Temporal server does not pause workflows)',
  );
  lines.push(
    `replay lookups:  ${counts(report.replayLooks.replays)} replays; the unknown attempts they looked at settled by: ${counts(report.replayLooks.settledBy)}`,
  );
  const { money } = report;
  lines.push(
    `money:           ${money.reservations} reservations · ${money.refusedAtCreate} creates refused 402 · ${money.failedForBudget} jobs failed for the budget · ${money.pricedOut} fallbacks kept out by the ceiling`,
  );
  const failed = new Set(report.violations.map((v) => v.invariant));
  for (const [number, text] of Object.entries(INVARIANTS)) {
    const n = report.violations.filter((v) => v.invariant === Number(number)).length;
    lines.push(`  ${failed.has(Number(number)) ? `✗ ${n} violation(s)` : '✓'}  ${number}. ${text}`);
  }
  if (report.violations.length === 0) {
    lines.push(`no violations (journal: ${report.journalFile})`);
    return lines.join('\n');
  }
  lines.push(`${report.violations.length} VIOLATION(S) with seed ${report.seed}:`);
  for (const violation of report.violations.slice(0, 20)) {
    lines.push(`  [${violation.invariant}] ${violation.message}`);
    for (const entry of violation.journal.slice(-8)) lines.push(`      ${JSON.stringify(entry)}`);
  }
  if (report.violations.length > 20) lines.push(`  … and ${report.violations.length - 20} more`);
  lines.push(
    `replay with: npm run chaos -- --seed ${report.seed}${report.engine === 'dev' ? '' : ` --engine ${report.engine}`}${report.temporalPostgres === 'apart' ? ' --temporal-postgres apart' : ''} (journal: ${report.journalFile})`,
  );
  return lines.join('\n');
}
