import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/** An owner's bucket: `perSecond` tokens refill it, up to `burst`. */
export interface TokenBucket {
  perSecond: number;
  burst: number;
}

/** What a bucket meters: new jobs, or requests to the webhook routes. */
export type BucketKind = 'creates' | 'webhooks';

/** Whole seconds (at least 1) until a bucket at `level` holds a whole token. */
const secondsToToken = (level: number, bucket: TokenBucket): number =>
  Math.max(1, Math.ceil((1 - level) / bucket.perSecond));

export type TokenTake = { taken: true } | { taken: false; retryAfterSeconds: number };

// One statement takes the token: the bucket is refilled by the time elapsed on PostgreSQL's clock
// and decremented only while a whole token is there. Under READ COMMITTED a take waiting on the
// row lock re-checks the WHERE against the row the other take wrote, so the last token goes once.
// The outer SELECT reads the bucket as the statement's snapshot saw it, for the refusal's
// Retry-After.
const TAKE_TOKEN = preparedStatement(
  'owner-limits.take-token',
  `WITH clock AS (SELECT clock_timestamp() AS at),
   taken AS (
     UPDATE owner_buckets b
        SET tokens = least($3::float8, b.tokens + $2::float8
                     * greatest(0, extract(epoch FROM c.at - b.refilled_at)::float8)) - 1,
            refilled_at = greatest(b.refilled_at, c.at)
       FROM clock c
      WHERE b.owner_id = $1 AND b.bucket = $4
        AND least($3::float8, b.tokens + $2::float8
                  * greatest(0, extract(epoch FROM c.at - b.refilled_at)::float8)) >= 1
      RETURNING b.owner_id
   )
   SELECT EXISTS (SELECT 1 FROM taken) AS taken,
          least($3::float8, b.tokens + $2::float8
                * greatest(0, extract(epoch FROM c.at - b.refilled_at)::float8)) AS level
     FROM owner_buckets b, clock c
    WHERE b.owner_id = $1 AND b.bucket = $4`,
);

// An owner's first take: a full bucket, less the token this take takes.
const NEW_BUCKET = preparedStatement(
  'owner-limits.new-bucket',
  `INSERT INTO owner_buckets (owner_id, bucket, tokens, refilled_at)
   VALUES ($1, $3, greatest(0, $2::float8 - 1), clock_timestamp())
   ON CONFLICT (owner_id, bucket) DO NOTHING
   RETURNING owner_id`,
);

/**
 * Takes one token from the owner's bucket of that kind, shared by every API replica. Refused, it
 * says when the next whole token is there (whole seconds, at least 1).
 */
export async function takeToken(
  db: Queryable,
  ownerId: string,
  kind: BucketKind,
  bucket: TokenBucket,
): Promise<TokenTake> {
  for (;;) {
    const { rows } = await db.query<{ taken: boolean; level: number }>(
      TAKE_TOKEN([ownerId, bucket.perSecond, bucket.burst, kind]),
    );
    const row = rows[0];
    if (row) {
      if (row.taken) return { taken: true };
      // A token seen in the statement's snapshot went to a concurrent take: look again, afresh.
      if (row.level >= 1) continue;
      return { taken: false, retryAfterSeconds: secondsToToken(row.level, bucket) };
    }
    // No bucket yet; a racing first take may make it first, and then this one takes from it.
    const inserted = await db.query(NEW_BUCKET([ownerId, bucket.burst, kind]));
    if (inserted.rowCount === 1) return { taken: true };
  }
}

// The bucket's level now, without taking from it; no row yet is a full bucket.
const PEEK_LEVEL = preparedStatement(
  'owner-limits.peek-level',
  `SELECT least($3::float8, b.tokens + $2::float8
                * greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at)::float8)) AS level
     FROM owner_buckets b
    WHERE b.owner_id = $1 AND b.bucket = $4`,
);

/** Whether a take would find a token now; refused, when one will be there. */
export async function peekToken(
  db: Queryable,
  ownerId: string,
  kind: BucketKind,
  bucket: TokenBucket,
): Promise<TokenTake> {
  const { rows } = await db.query<{ level: number }>(
    PEEK_LEVEL([ownerId, bucket.perSecond, bucket.burst, kind]),
  );
  const level = rows[0]?.level ?? bucket.burst;
  return level >= 1
    ? { taken: true }
    : { taken: false, retryAfterSeconds: secondsToToken(level, bucket) };
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
