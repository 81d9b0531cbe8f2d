import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** An owner's create bucket: `perSecond` tokens refill it, up to `burst`. */
export interface CreateBucket {
  perSecond: number;
  burst: number;
}

export type TokenTake = { taken: true } | { taken: false; retryAfterSeconds: number };

// One statement takes the token: the bucket is refilled by the time elapsed on PostgreSQL's clock
// and decremented only while a whole token is there. Under READ COMMITTED a take waiting on the
// row lock re-checks the WHERE against the row the other take wrote, so the last token goes once.
// The outer SELECT reads the bucket as the statement's snapshot saw it, for the refusal's
// Retry-After.
const TAKE_CREATE_TOKEN = preparedStatement(
  'owner-limits.take-create-token',
  `WITH clock AS (SELECT clock_timestamp() AS at),
   taken AS (
     UPDATE owner_create_buckets b
        SET tokens = least($3::float8, b.tokens + $2::float8
                     * greatest(0, extract(epoch FROM c.at - b.refilled_at)::float8)) - 1,
            refilled_at = greatest(b.refilled_at, c.at)
       FROM clock c
      WHERE b.owner_id = $1
        AND least($3::float8, b.tokens + $2::float8
                  * greatest(0, extract(epoch FROM c.at - b.refilled_at)::float8)) >= 1
      RETURNING b.owner_id
   )
   SELECT EXISTS (SELECT 1 FROM taken) AS taken,
          least($3::float8, b.tokens + $2::float8
                * greatest(0, extract(epoch FROM c.at - b.refilled_at)::float8)) AS level
     FROM owner_create_buckets b, clock c
    WHERE b.owner_id = $1`,
);

// An owner's first create: a full bucket, less the token this create takes.
const NEW_BUCKET = preparedStatement(
  'owner-limits.new-bucket',
  `INSERT INTO owner_create_buckets (owner_id, tokens, refilled_at)
   VALUES ($1, greatest(0, $2::float8 - 1), clock_timestamp())
   ON CONFLICT (owner_id) DO NOTHING
   RETURNING owner_id`,
);

/**
 * Takes one create token from the owner's bucket, shared by every API replica. Refused, it says
 * when the next whole token is there (whole seconds, at least 1).
 */
export async function takeCreateToken(
  db: Queryable,
  ownerId: string,
  bucket: CreateBucket,
): Promise<TokenTake> {
  for (;;) {
    const { rows } = await db.query<{ taken: boolean; level: number }>(
      TAKE_CREATE_TOKEN([ownerId, bucket.perSecond, bucket.burst]),
    );
    const row = rows[0];
    if (row) {
      if (row.taken) return { taken: true };
      // A token seen in the statement's snapshot went to a concurrent take: look again, afresh.
      if (row.level >= 1) continue;
      const seconds = (1 - row.level) / bucket.perSecond;
      return { taken: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
    }
    // No bucket yet; a racing first create may make it first, and then this one takes from it.
    const inserted = await db.query(NEW_BUCKET([ownerId, bucket.burst]));
    if (inserted.rowCount === 1) return { taken: true };
  }
}

// Counting stops at the limit: an owner far over it costs no more than one at it.
const COUNT_OPEN_JOBS = preparedStatement(
  'owner-limits.count-open-jobs',
  `SELECT count(*)::int AS n FROM (
     SELECT 1 FROM jobs WHERE owner_id = $1 AND terminal_status IS NULL LIMIT $2
   ) open`,
);

/**
 * Serialises the owner's creates until the transaction ends, and says how many of its jobs are
 * open (at most `limit`). Only creates add open jobs, so under this lock the count stays true
 * until the insert that follows it commits.
 */
export async function lockOwnerAndCountOpenJobs(
  db: Queryable,
  ownerId: string,
  limit: number,
): Promise<number> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('onejob.open-jobs:' || $1, 0))`, [
    ownerId,
  ]);
  const { rows } = await db.query<{ n: number }>(COUNT_OPEN_JOBS([ownerId, limit]));
  return rows[0]!.n;
}
