/**
 * Operators' holds on providers (migration 0028): a hold and a release are each one kept change,
 * which PostgreSQL applies to the holds in force, so no hold exists without who and why.
 */
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

export interface ProviderHold {
  provider: string;
  heldAt: Date;
  heldBy: string;
  reason: string;
}

export interface ProviderHoldChange {
  id: string;
  at: Date;
  provider: string;
  change: 'held' | 'released';
  changedBy: string;
  reason: string;
}

/**
 * A hold of what is already held, or a release of what is not (a provider, an admission): nothing
 * was recorded. Its message is PostgreSQL's, naming the hold in force.
 */
export class HoldConflict extends Error {}

/** Runs a hold's or a release's statement; a refusal of its trigger becomes a HoldConflict. */
export async function holdChange<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    const code = (error as { code?: string }).code;
    // 23505: already held (the trigger names the hold in force); P0002: not held.
    if (code === '23505' || code === 'P0002') throw new HoldConflict((error as Error).message);
    throw error;
  }
}

interface HoldRow {
  provider: string;
  held_at: Date;
  held_by: string;
  reason: string;
}

const toHold = (row: HoldRow): ProviderHold => ({
  provider: row.provider,
  heldAt: row.held_at,
  heldBy: row.held_by,
  reason: row.reason,
});

const LIST_HOLDS = preparedStatement(
  'provider-holds.list',
  `SELECT provider, held_at, held_by, reason FROM provider_holds ORDER BY provider`,
);

export async function listProviderHolds(db: Queryable): Promise<ProviderHold[]> {
  const { rows } = await db.query<HoldRow>(LIST_HOLDS([]));
  return rows.map(toHold);
}

const FIND_HOLD = preparedStatement(
  'provider-holds.find',
  `SELECT provider, held_at, held_by, reason FROM provider_holds WHERE provider = $1`,
);

export async function findProviderHold(
  db: Queryable,
  provider: string,
): Promise<ProviderHold | undefined> {
  const { rows } = await db.query<HoldRow>(FIND_HOLD([provider]));
  return rows[0] && toHold(rows[0]);
}

const CHANGE_HOLD = preparedStatement(
  'provider-holds.change',
  `INSERT INTO provider_hold_changes (provider, change, changed_by, reason)
   VALUES ($1, $2, $3, $4)
   RETURNING id::text, at, provider, change, changed_by, reason`,
);

interface ChangeRow {
  id: string;
  at: Date;
  provider: string;
  change: ProviderHoldChange['change'];
  changed_by: string;
  reason: string;
}

const toChange = (row: ChangeRow): ProviderHoldChange => ({
  id: row.id,
  at: row.at,
  provider: row.provider,
  change: row.change,
  changedBy: row.changed_by,
  reason: row.reason,
});

/**
 * Holds or releases a provider, recorded with who and why; from the next attempt on, every
 * worker honours it. Throws HoldConflict (PostgreSQL's words) when the provider is
 * already held, or is not held to be released.
 */
export async function changeProviderHold(
  db: Queryable,
  change: { provider: string; change: ProviderHoldChange['change']; by: string; reason: string },
): Promise<ProviderHoldChange> {
  const { rows } = await holdChange(() =>
    db.query<ChangeRow>(CHANGE_HOLD([change.provider, change.change, change.by, change.reason])),
  );
  return toChange(rows[0]!);
}

const LIST_CHANGES = preparedStatement(
  'provider-holds.changes',
  `SELECT id::text, at, provider, change, changed_by, reason
     FROM provider_hold_changes ORDER BY id DESC LIMIT $1`,
);

/** The latest holds and releases, newest first. */
export async function listProviderHoldChanges(
  db: Queryable,
  limit = 100,
): Promise<ProviderHoldChange[]> {
  const { rows } = await db.query<ChangeRow>(LIST_CHANGES([limit]));
  return rows.map(toChange);
}
