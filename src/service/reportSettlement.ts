/**
 * Unknown attempts settled from a provider's own report (issue 61): a plan first (what each row
 * would do, changing nothing), then, when asked, one audited run that settles what the plan says
 * through the same path as a single resolve. A row that contradicts what we hold is never forced.
 */
import { createHash } from 'node:crypto';
import {
  attemptsById,
  recordSettlementRun,
  recordSettlementRow,
  unknownAttemptsNotIn,
  type ReportedAttempt,
} from '../db/reportSettlements';
import {
  minorUnits,
  readProviderReport,
  type ReportFormat,
  type ReportMapping,
  type ReportRow,
  type UnreadableRow,
} from '../domain/providerReport';
import { checkJobResult, findJobType } from '../jobTypes';
import { resolveAttempt, type AttemptServiceDeps } from './attempts';
import { concurrently } from './concurrently';
import { ServiceError } from './errors';

/** What a row of the report comes to. */
export type SettlementVerdict =
  'settle' | 'already' | 'contradicts' | 'not_found' | 'in_flight' | 'unreadable';

export interface PlannedRow {
  line: number;
  key?: string;
  verdict: SettlementVerdict;
  outcome?: 'succeeded' | 'failed';
  jobId?: string;
  /** What the attempt is now, as we hold it. */
  state?: string;
  detail: string;
  /** The result a `settle` of a success records (checked against the job's contract). */
  result?: unknown;
  /** The row as read, judged again right before it is applied. */
  reported?: ReportRow;
}

export interface SettlementPlan {
  provider: string;
  source: string;
  sha256: string;
  counts: Record<SettlementVerdict, number>;
  rows: PlannedRow[];
  /** The provider's unknown attempts the report does not name (the oldest few listed). */
  unmentioned: { count: number; attemptIds: string[] };
  mapping: ReportMapping;
}

/** How many attempts are settled at once when a plan is applied (each a workflow update). */
const APPLY_CONCURRENCY = 8;

/** Reads the report and judges each row against our attempts; writes nothing. */
export async function planReportSettlement(
  deps: Pick<AttemptServiceDeps, 'pool'>,
  report: {
    provider: string;
    source: string;
    text: string;
    format: ReportFormat;
    mapping: ReportMapping;
  },
): Promise<SettlementPlan> {
  let read: Array<ReportRow | UnreadableRow>;
  try {
    read = readProviderReport(report.text, report.format, report.mapping);
  } catch (error) {
    throw new ServiceError('invalid-input', (error as Error).message);
  }
  const keys = [...new Set(read.flatMap((row) => (row.key ? [row.key] : [])))];
  const attempts = await attemptsById(deps.pool, keys);
  const firstOfKey = new Map<string, ReportRow>();
  // A key also on a line that cannot be read (a refund, say) is not to be settled from the rest.
  const selfContradicted = new Set<string>(
    read.flatMap((row) => ('unreadable' in row && row.key ? [row.key] : [])),
  );
  const rows = read.map((row): PlannedRow => {
    if ('unreadable' in row)
      return { line: row.line, key: row.key, verdict: 'unreadable', detail: row.unreadable };
    const earlier = firstOfKey.get(row.key);
    if (!earlier) {
      firstOfKey.set(row.key, row);
      return judge(row, attempts.get(row.key), report.provider, report.mapping);
    }
    const planned = repeated(row, earlier);
    if (planned.verdict === 'contradicts') selfContradicted.add(row.key);
    return planned;
  });
  // A key the report lists twice, differently, contradicts itself: its lines settle nothing.
  for (const [at, planned] of rows.entries())
    if (planned.key && selfContradicted.has(planned.key) && planned.verdict === 'settle')
      rows[at] = {
        ...planned,
        verdict: 'contradicts',
        detail: 'another line of the report says otherwise of the same key',
        result: undefined,
      };
  const counts = Object.fromEntries(
    (['settle', 'already', 'contradicts', 'not_found', 'in_flight', 'unreadable'] as const).map(
      (verdict) => [verdict, rows.filter((row) => row.verdict === verdict).length],
    ),
  ) as Record<SettlementVerdict, number>;
  return {
    provider: report.provider,
    source: report.source,
    sha256: createHash('sha256').update(report.text).digest('hex'),
    counts,
    rows,
    unmentioned: await unknownAttemptsNotIn(deps.pool, report.provider, keys, 20),
    mapping: report.mapping,
  };
}

function repeated(row: ReportRow, earlier: ReportRow): PlannedRow {
  const same =
    row.outcome === earlier.outcome &&
    row.amount === earlier.amount &&
    row.providerId === earlier.providerId &&
    row.currency === earlier.currency &&
    row.account === earlier.account;
  return {
    line: row.line,
    key: row.key,
    outcome: row.outcome,
    verdict: same ? 'already' : 'contradicts',
    detail: same
      ? `repeats line ${earlier.line}`
      : `the report lists this key on line ${earlier.line} too, differently`,
  };
}

/** One row against the attempt it names, as we hold it now. */
function judge(
  row: ReportRow,
  attempt: ReportedAttempt | undefined,
  provider: string,
  mapping: ReportMapping,
): PlannedRow {
  const base = { line: row.line, key: row.key, outcome: row.outcome };
  if (!attempt) return { ...base, verdict: 'not_found', detail: `no attempt ${row.key}` };
  if (attempt.provider !== provider)
    return {
      ...base,
      verdict: 'not_found',
      detail: `attempt ${row.key} went to ${attempt.provider}, not ${provider}`,
    };
  const at = { ...base, jobId: attempt.jobId, state: attempt.state };
  const contract = findJobType(attempt.jobType);
  if (!contract?.resultFromReport)
    return {
      ...at,
      verdict: 'unreadable',
      detail: `a ${attempt.jobType} attempt is not settled from a provider's report`,
    };
  let result: unknown;
  if (row.outcome === 'succeeded') {
    const currency = row.currency ?? String(attempt.jobInput.currency ?? '');
    const amountMinor = minorUnits(row.amount ?? '', mapping.amountIn, currency);
    if (amountMinor === undefined)
      return {
        ...at,
        verdict: 'contradicts',
        detail: `amount ${row.amount} is not a whole number of ${currency}'s smallest unit`,
      };
    const reported = {
      providerId: row.providerId,
      amountMinor,
      currency,
      ...(row.account ? { account: row.account } : {}),
    };
    const checked = checkJobResult(
      { type: attempt.jobType, input: attempt.jobInput },
      contract.resultFromReport(attempt.jobInput, reported, attempt.id),
      attempt.id,
    );
    if (!checked.ok) return { ...at, verdict: 'contradicts', detail: checked.reason };
    result = checked.output;
  }
  const done = row.outcome === 'succeeded';
  switch (attempt.state) {
    case 'starting':
    case 'running':
      return { ...at, verdict: 'in_flight', detail: 'its call is still out: left to it' };
    case 'succeeded':
    case 'lost':
      return done
        ? { ...at, verdict: 'already', detail: `held as ${attempt.state} already` }
        : { ...at, verdict: 'contradicts', detail: `we hold it ${attempt.state}: the work done` };
    case 'failed':
    case 'cancelled':
      return done
        ? {
            ...at,
            verdict: 'contradicts',
            detail: `we hold it ${attempt.state}, the provider says it did the work: look at it by hand`,
          }
        : { ...at, verdict: 'already', detail: `held as ${attempt.state} already` };
    case 'unknown':
      if (done && attempt.failureReported)
        return {
          ...at,
          verdict: 'contradicts',
          detail: 'the provider sent a signed "failed" callback for it',
        };
      if (!done && attempt.successAnswered)
        return {
          ...at,
          verdict: 'contradicts',
          detail: 'the provider answered its call with a success (2xx)',
        };
      if (!done && attempt.replayInDoubt)
        return {
          ...at,
          verdict: 'contradicts',
          detail: 'a replay of its request lost its answer and may have done the work since',
        };
      return {
        ...at,
        verdict: 'settle',
        detail: `to settle ${row.outcome}`,
        result,
        reported: row,
      };
  }
}

export interface AppliedRow {
  line: number;
  attemptId: string;
  result: 'settled' | 'held' | 'refused';
  detail: string;
}

/**
 * Applies a plan's `settle` rows through the single resolve path (the workflow's rules, the
 * contract, the compare-and-swap), recorded as one run: the run first, then each row's answer.
 * Nothing to settle records nothing. A re-run of the same report finds them `already` settled.
 */
export async function applyReportSettlement(
  deps: AttemptServiceDeps,
  plan: SettlementPlan,
  by: { operator: string; reason: string },
): Promise<{ settlementId: string | null; applied: AppliedRow[] }> {
  const toSettle = plan.rows.filter((row) => row.verdict === 'settle');
  if (toSettle.length === 0) return { settlementId: null, applied: [] };
  const settlementId = await recordSettlementRun(deps.pool, {
    provider: plan.provider,
    operator: by.operator,
    reason: by.reason,
    source: plan.source,
    sha256: plan.sha256,
    counts: plan.counts,
  });
  const applied: AppliedRow[] = [];
  await concurrently(toSettle, APPLY_CONCURRENCY, async (row) => {
    const attemptId = row.key!;
    // Judged again as it is now: evidence may have come since the plan (a 2xx, a callback).
    const now = judge(
      row.reported!,
      (await attemptsById(deps.pool, [attemptId])).get(attemptId),
      plan.provider,
      plan.mapping,
    );
    const answer =
      now.verdict === 'settle'
        ? await settleOne(deps, now, by, `report settlement ${settlementId}`)
        : { result: 'refused' as const, detail: `no longer to settle: ${now.detail}` };
    await recordSettlementRow(deps.pool, {
      settlementId,
      line: row.line,
      attemptId,
      outcome: row.outcome!,
      ...answer,
    });
    applied.push({ line: row.line, attemptId, ...answer });
  });
  applied.sort((a, b) => a.line - b.line);
  return { settlementId, applied };
}

async function settleOne(
  deps: AttemptServiceDeps,
  row: PlannedRow,
  by: { operator: string; reason: string },
  run: string,
): Promise<Pick<AppliedRow, 'result' | 'detail'>> {
  try {
    const resolved = await resolveAttempt(deps, by.operator, row.key!, {
      outcome: row.outcome!,
      reason: `${by.reason} (${run}, line ${row.line})`,
      ...(row.outcome === 'succeeded' ? { result: row.result } : {}),
    });
    if (!resolved) return { result: 'refused', detail: `no attempt ${row.key}` };
    return resolved.held
      ? { result: 'held', detail: 'failed once its call can no longer land' }
      : { result: 'settled', detail: `attempt is ${resolved.state}` };
  } catch (error) {
    // The workflow's rules refused it (settled meanwhile, say): nothing was changed.
    return { result: 'refused', detail: (error as Error).message };
  }
}
