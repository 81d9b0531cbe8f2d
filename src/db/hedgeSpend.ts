import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** What one owner's hedged jobs with one primary spent over a window, in one currency. */
export interface HedgeSpend {
  /** Null for calls of unknown cost. */
  currency: string | null;
  /** Attempt 1's calls: what the primaries cost, which they would have cost alone. */
  primaryCost: number;
  /** Every later call of those jobs: the hedges (and fallbacks after a failed primary). */
  extraCost: number;
  /** Later calls of known cost. */
  extraKnown: number;
  /** Later calls of unknown cost (counted under a null currency). */
  extraUnknown: number;
}

// Hedged jobs by their mode, whether they hedged or ran exclusive because the budget was spent:
// the primaries of the latter are what bring the share back down. Their ended calls are read
// through attempts_call_ends_idx (migration 0008), attempt 1 of each job by its key.
const HEDGE_SPEND = preparedStatement(
  'hedge-spend.in-window',
  `SELECT a.cost_currency AS currency,
          coalesce(sum(a.cost) FILTER (WHERE a.seq = 1), 0)::float8 AS primary_cost,
          coalesce(sum(a.cost) FILTER (WHERE a.seq > 1), 0)::float8 AS extra_cost,
          count(*) FILTER (WHERE a.seq > 1 AND a.cost IS NOT NULL)::int AS extra_known,
          count(*) FILTER (WHERE a.seq > 1 AND a.cost IS NULL)::int AS extra_unknown
     FROM attempts a
     JOIN jobs j ON j.id = a.job_id AND j.mode = 'hedged'
     JOIN attempts p ON p.job_id = a.job_id AND p.seq = 1
    WHERE a.call_outcome IS NOT NULL
      AND a.call_ended_at >= now() - make_interval(secs => $2::float8 / 1000)
      AND p.provider = $1 AND j.owner_id = $3
    GROUP BY a.cost_currency`,
);

/**
 * Per currency, what the calls of the owner's hedged jobs whose primary is `primary` cost lately:
 * each owner spends its own budget, so one owner's hedges never pause another's.
 */
export async function hedgeSpendInWindow(
  db: Queryable,
  ownerId: string,
  primary: string,
  windowMs: number,
): Promise<HedgeSpend[]> {
  const { rows } = await db.query<{
    currency: string | null;
    primary_cost: number;
    extra_cost: number;
    extra_known: number;
    extra_unknown: number;
  }>(HEDGE_SPEND([primary, windowMs, ownerId]));
  return rows.map((row) => ({
    currency: row.currency,
    primaryCost: row.primary_cost,
    extraCost: row.extra_cost,
    extraKnown: row.extra_known,
    extraUnknown: row.extra_unknown,
  }));
}

const MEAN_HEDGE_COST = preparedStatement(
  'hedge-spend.mean-hedge-cost',
  `SELECT a.cost_currency AS currency, avg(a.cost)::float8 AS mean, count(*)::int AS calls
     FROM attempts a
     JOIN jobs j ON j.id = a.job_id AND j.mode = 'hedged'
    WHERE a.call_outcome IS NOT NULL AND a.seq > 1
      AND a.call_ended_at >= now() - make_interval(secs => $2::float8 / 1000)
      AND a.provider = $1 AND a.cost IS NOT NULL AND j.owner_id = $3
    GROUP BY a.cost_currency`,
);

/** The mean known cost of a later call of the owner's hedged jobs on `provider` lately, per currency. */
export async function meanHedgeCost(
  db: Queryable,
  ownerId: string,
  provider: string,
  windowMs: number,
): Promise<Array<{ currency: string; mean: number; calls: number }>> {
  const { rows } = await db.query<{ currency: string; mean: number; calls: number }>(
    MEAN_HEDGE_COST([provider, windowMs, ownerId]),
  );
  return rows;
}
