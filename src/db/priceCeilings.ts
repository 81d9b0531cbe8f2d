import type { PriceCeiling } from '../domain/budgets';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

const COLUMNS = `owner_id, job_type, currency, max_job_cost::float8 AS max_job_cost,
  max_multiple::float8 AS max_multiple, set_by, reason`;

interface CeilingRow {
  owner_id: string | null;
  job_type: string | null;
  currency: string | null;
  max_job_cost: number | null;
  max_multiple: number | null;
  set_by: string;
  reason: string;
}

const toCeiling = (row: CeilingRow): PriceCeiling => ({
  ownerId: row.owner_id,
  jobType: row.job_type,
  maxJobCost:
    row.max_job_cost === null || row.currency === null
      ? null
      : { amount: row.max_job_cost, currency: row.currency },
  maxMultiple: row.max_multiple,
  setBy: row.set_by,
  reason: row.reason,
});

const APPLICABLE = preparedStatement(
  'price-ceilings.applicable',
  `SELECT ${COLUMNS} FROM price_ceilings
    WHERE (owner_id IS NULL OR owner_id = $1) AND (job_type IS NULL OR job_type = $2)
    ORDER BY id`,
);

/** Every ceiling over this owner's jobs of this type: each holds. */
export async function ceilingsFor(
  db: Queryable,
  ownerId: string,
  jobType: string,
): Promise<PriceCeiling[]> {
  const { rows } = await db.query<CeilingRow>(APPLICABLE([ownerId, jobType]));
  return rows.map(toCeiling);
}

const ALL = preparedStatement(
  'price-ceilings.all',
  `SELECT ${COLUMNS} FROM price_ceilings ORDER BY owner_id NULLS FIRST, job_type NULLS FIRST`,
);

export async function allCeilings(db: Queryable): Promise<PriceCeiling[]> {
  const { rows } = await db.query<CeilingRow>(ALL([]));
  return rows.map(toCeiling);
}

const SET = preparedStatement(
  'price-ceilings.set',
  `INSERT INTO price_ceilings (owner_id, job_type, currency, max_job_cost, max_multiple, set_by, reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7)
   ON CONFLICT (coalesce(owner_id, ''), coalesce(job_type, ''))
   DO UPDATE SET currency = EXCLUDED.currency, max_job_cost = EXCLUDED.max_job_cost,
                 max_multiple = EXCLUDED.max_multiple, set_by = EXCLUDED.set_by,
                 reason = EXCLUDED.reason, set_at = now()`,
);

/** Sets the ceiling of one scope (null owner or type: every one), replacing what it was. */
export async function setCeiling(
  db: Queryable,
  ceiling: Omit<PriceCeiling, 'setBy' | 'reason'>,
  by: { actor: string; reason: string },
): Promise<void> {
  await db.query(
    SET([
      ceiling.ownerId,
      ceiling.jobType,
      ceiling.maxJobCost?.currency ?? null,
      ceiling.maxJobCost?.amount ?? null,
      ceiling.maxMultiple,
      by.actor,
      by.reason,
    ]),
  );
}

const REMOVE = preparedStatement(
  'price-ceilings.remove',
  `DELETE FROM price_ceilings
    WHERE coalesce(owner_id, '') = coalesce($1::text, '') AND coalesce(job_type, '') = coalesce($2::text, '')`,
);

/** Removes the ceiling of one scope; whether there was one. */
export async function removeCeiling(
  db: Queryable,
  scope: { ownerId: string | null; jobType: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(REMOVE([scope.ownerId, scope.jobType]));
  return (rowCount ?? 0) > 0;
}
