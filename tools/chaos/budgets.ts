import type pg from 'pg';
import { setCeiling } from '../../src/db/priceCeilings';
import type { Money } from '../../src/domain/cost';
import { worstCaseOfCall } from '../../src/providers/pricing';
import type { ProviderConfig } from '../../src/providers/provider';
import type { Violation } from './invariants';

/**
 * Money under the campaign (issue 60): one owner spends under a daily budget small enough to run
 * out while the traffic goes on, another's failover is held to a price ceiling that keeps the dear
 * backup out, and invariant 12 checks both from the rows, not from the gate's own sums alone.
 */

/** What one call to any of the campaign's payment APIs may cost: the worst case it reserves. */
export const PAYMENT_CALL_WORST_CASE: Money = { currency: 'USD', amount: 0.3 };

/**
 * An owner of the opening only (traffic never acts as it), whose budget is below one call's
 * worst case: its job is accepted, and fails `budget-exceeded` before anything is sent.
 */
export const BROKE_OWNER = 'chaos-dave';

/**
 * The budgets: the opening's owner under one it never reaches (each opening job reserves and
 * settles under it, quirks and unknown charges included), an owner whose budget runs out under
 * traffic (about twenty charge attempts a day), and the broke owner's.
 */
const BUDGETS = [
  { owner: 'chaos-alice', period: 'month', currency: 'USD', amount: 1_000 },
  { owner: 'chaos-bob', period: 'day', currency: 'USD', amount: 6 },
  { owner: BROKE_OWNER, period: 'day', currency: 'USD', amount: 0.1 },
] as const;

/** The owner under a price ceiling: no fallback or hedge above 5× its primary. */
export const CEILING_OWNER = 'chaos-carol';
const MAX_MULTIPLE = 5;

/**
 * Sets the campaign's budget (as an operator does, through the API) and its price ceiling (the
 * CLI's table; ceilings have no route) before any traffic.
 */
export async function setCampaignMoneyRules(
  db: pg.Pool,
  api: { apiUrl: string; operatorToken: string },
): Promise<void> {
  for (const budget of BUDGETS) {
    const response = await fetch(
      `${api.apiUrl}/v1/operator/budgets/${budget.owner}?period=${budget.period}`,
      {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${api.operatorToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          currency: budget.currency,
          amount: budget.amount,
          reason: 'fault campaign: budgets under traffic and faults',
        }),
      },
    );
    if (!response.ok)
      throw new Error(
        `setting ${budget.owner}'s budget: ${response.status} ${await response.text()}`,
      );
  }
  await setCeiling(
    db,
    { ownerId: CEILING_OWNER, jobType: null, maxJobCost: null, maxMultiple: MAX_MULTIPLE },
    { actor: 'chaos-operator', reason: 'fault campaign: failover held to a price ceiling' },
  );
}

interface BudgetRow {
  id: string;
  owner_id: string;
  job_type: string | null;
  amount: string;
}

interface PeriodRow {
  budget_id: string;
  period_start: Date;
  reserved: string;
  spent: string;
}

interface ReservedAttemptRow {
  id: string;
  job_id: string;
  owner_id: string;
  job_type: string;
  state: string;
  worst_case: string | null;
  cost: string | null;
  cost_currency: string | null;
  worst_case_currency: string | null;
  call_outcome: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  budget_id: string | null;
  period_start: Date | null;
  reservation_worst_case: string | null;
  settled_cost: string | null;
}

/** What the campaign's money rules did, for its report. */
export interface MoneyLooks {
  /** Attempts that reserved in a budget. */
  reservations: number;
  /** Creates answered 402 budget-exceeded. */
  refusedAtCreate: number;
  /** Jobs that failed for their owner's budget. */
  failedForBudget: number;
  /** Fallbacks and hedges a price ceiling kept out (notes carrying what was avoided). */
  pricedOut: number;
}

/**
 * What an attempt counts for in its budget, by the rule docs/costs.md states: its cost once the
 * call's outcome and cost are known, nothing when it ended without its request leaving, else its
 * worst case (it may have billed, or still may).
 */
function countedFor(attempt: ReservedAttemptRow): number {
  if (
    attempt.call_outcome !== null &&
    attempt.cost !== null &&
    attempt.cost_currency === attempt.worst_case_currency
  )
    return Number(attempt.cost);
  if (attempt.finished_at !== null && attempt.started_at === null) return 0;
  return Number(attempt.worst_case);
}

/** Amounts equal to the tenth of a millionth: numeric sums read back as text. */
const same = (a: number, b: number): boolean => Math.abs(a - b) < 1e-7;

/**
 * Invariant 12, from the rows: (a) every attempt of a budgeted owner reserved its worst case in
 * each budget over it; (b) a reservation counts what its attempt counts for, so an unknown attempt
 * with no known cost still holds its worst case; (c) each period's reserved and spent are the sums
 * of its reservations and never pass the budget by more than one worst case; (d) a job failed for
 * its budget only when the figures its note carries left no room; (e) no attempt went to a
 * fallback or hedge dearer than its ceiling's multiple of the primary, whatever the prompt.
 */
export async function checkMoney(
  db: pg.Pool,
  providers: ProviderConfig[],
  refusedAtCreate: number,
): Promise<{ violations: Violation[]; looks: MoneyLooks }> {
  const violations: Violation[] = [];
  const violate = (message: string, needles: string[]) =>
    violations.push({ invariant: 12, message, needles });

  const budgets = (
    await db.query<BudgetRow>('SELECT id, owner_id, job_type, amount::text FROM budgets')
  ).rows;
  const periods = (
    await db.query<PeriodRow>(
      'SELECT budget_id, period_start, reserved::text, spent::text FROM budget_periods',
    )
  ).rows;
  // Every attempt of a budgeted owner, once per budget over it (or once with no reservation).
  const rows = (
    await db.query<ReservedAttemptRow>(
      `SELECT a.id, a.job_id, j.owner_id, j.job_type, a.state, a.worst_case::text,
              a.cost::text, a.cost_currency, a.worst_case_currency, a.call_outcome,
              a.started_at, a.finished_at, b.id AS budget_id, r.period_start,
              r.worst_case::text AS reservation_worst_case, r.settled_cost::text
         FROM attempts a JOIN jobs j ON j.id = a.job_id
         JOIN budgets b ON b.owner_id = j.owner_id
                       AND (b.job_type IS NULL OR b.job_type = j.job_type)
                       AND b.set_at <= a.created_at
         LEFT JOIN budget_reservations r ON r.attempt_id = a.id AND r.budget_id = b.id`,
    )
  ).rows;

  // (a) and (b)
  const byPeriod = new Map<string, { reserved: number; spent: number; worst: number }>();
  for (const row of rows) {
    if (row.period_start === null || row.reservation_worst_case === null) {
      violate(
        `attempt ${row.id} of ${row.owner_id} was made under budget ${row.budget_id} without a reservation`,
        [row.id, row.job_id],
      );
      continue;
    }
    if (
      row.worst_case === null ||
      !same(Number(row.reservation_worst_case), Number(row.worst_case))
    )
      violate(
        `attempt ${row.id} reserved ${row.reservation_worst_case} in budget ${row.budget_id} but its worst case is ${row.worst_case}`,
        [row.id, row.job_id],
      );
    const counted = countedFor(row);
    const settled = row.settled_cost === null ? null : Number(row.settled_cost);
    // An unknown attempt with no cost known counts for its worst case: settled below it, it gave
    // up its reservation while it may still bill.
    if (settled !== null && !same(settled, counted))
      violate(
        `attempt ${row.id} (${row.state}) counts for ${counted} but its reservation in budget ${row.budget_id} was settled at ${settled}${row.state === 'unknown' ? ': it gave up its reservation while it may still bill' : ''}`,
        [row.id, row.job_id],
      );
    const key = `${row.budget_id}|${row.period_start.toISOString()}`;
    const sums = byPeriod.get(key) ?? { reserved: 0, spent: 0, worst: 0 };
    if (settled === null) sums.reserved += Number(row.reservation_worst_case);
    else sums.spent += settled;
    sums.worst = Math.max(sums.worst, Number(row.reservation_worst_case));
    byPeriod.set(key, sums);
  }

  // (c)
  const amountOf = new Map(budgets.map((budget) => [budget.id, Number(budget.amount)]));
  for (const period of periods) {
    const key = `${period.budget_id}|${period.period_start.toISOString()}`;
    const sums = byPeriod.get(key) ?? { reserved: 0, spent: 0, worst: 0 };
    const reserved = Number(period.reserved);
    const spent = Number(period.spent);
    if (!same(reserved, sums.reserved) || !same(spent, sums.spent))
      violate(
        `budget ${period.budget_id}'s period from ${period.period_start.toISOString()} says ${reserved} reserved and ${spent} spent; its reservations come to ${sums.reserved} and ${sums.spent}`,
        [],
      );
    const amount = amountOf.get(period.budget_id) ?? 0;
    if (sums.reserved + sums.spent > amount + sums.worst + 1e-7)
      violate(
        `budget ${period.budget_id} (${amount}) has ${sums.reserved} reserved and ${sums.spent} spent from ${period.period_start.toISOString()}: past it by more than one worst case (${sums.worst})`,
        [],
      );
  }

  // (d)
  const failed = (
    await db.query<{ id: string; notes: Array<Record<string, unknown>> }>(
      `SELECT id, notes FROM jobs WHERE failure->>'code' = 'budget-exceeded'`,
    )
  ).rows;
  for (const job of failed) {
    const refusal = job.notes.filter((note) => note.event === 'budget_exceeded').at(-1);
    const figures = refusal?.budget as Record<string, unknown> | undefined;
    const [amount, reserved, spent, worst] = ['amount', 'reserved', 'spent', 'worstCase'].map(
      (name) => Number(figures?.[name]),
    ) as [number, number, number, number];
    if (!(reserved + spent + worst > amount))
      violate(
        `job ${job.id} failed for its budget, but the figures it noted (${JSON.stringify(figures ?? null)}) left room`,
        [job.id],
      );
  }

  // (e)
  const configs = new Map(providers.map((config) => [config.name, config]));
  const ceilings = (
    await db.query<{ owner_id: string | null; job_type: string | null; max_multiple: string }>(
      'SELECT owner_id, job_type, max_multiple::text FROM price_ceilings WHERE max_multiple IS NOT NULL',
    )
  ).rows;
  for (const ceiling of ceilings) {
    const held = (
      await db.query<{ id: string; job_id: string; provider: string; plan: string[] }>(
        `SELECT a.id, a.job_id, a.provider, j.provider_plan AS plan
           FROM attempts a JOIN jobs j ON j.id = a.job_id
          WHERE ($1::text IS NULL OR j.owner_id = $1) AND ($2::text IS NULL OR j.job_type = $2)
            AND a.provider <> j.provider_plan[1]`,
        [ceiling.owner_id, ceiling.job_type],
      )
    ).rows;
    for (const attempt of held) {
      const primary = configs.get(attempt.plan[0]!);
      const other = configs.get(attempt.provider);
      if (primary && other && alwaysDearer(other, primary, Number(ceiling.max_multiple)))
        violate(
          `attempt ${attempt.id} went to ${attempt.provider}, dearer than ${ceiling.max_multiple}× the primary ${attempt.plan[0]} for any prompt`,
          [attempt.id, attempt.job_id],
        );
    }
  }

  const pricedOut = (
    await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM jobs, jsonb_array_elements(notes) note
        WHERE note->>'event' = 'provider_skipped' AND note ? 'avoided'`,
    )
  ).rows[0]!;
  return {
    violations,
    looks: {
      reservations: rows.filter((row) => row.period_start !== null).length,
      refusedAtCreate,
      failedForBudget: failed.length,
      pricedOut: Number(pricedOut.n),
    },
  };
}

/**
 * Whether a call to `other` costs more than `multiple` × a call to `primary` for every prompt:
 * with no prompt (the output cap alone, or a payment API's fee) and per prompt token.
 */
function alwaysDearer(other: ProviderConfig, primary: ProviderConfig, multiple: number): boolean {
  const at = (config: ProviderConfig, tokens: number) => worstCaseOfCall(config, tokens)?.amount;
  const [otherBase, primaryBase] = [at(other, 0), at(primary, 0)];
  const [otherMillion, primaryMillion] = [at(other, 1e6), at(primary, 1e6)];
  if ([otherBase, primaryBase, otherMillion, primaryMillion].some((v) => v === undefined))
    return false;
  const perToken = otherMillion! - otherBase! > multiple * (primaryMillion! - primaryBase!);
  const flat = otherBase! > multiple * primaryBase!;
  // A payment API's fee does not grow with a prompt: its flat part alone says.
  return other.kind === 'http' ? flat : flat && perToken;
}
