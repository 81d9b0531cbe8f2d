import { findJobByKey, insertJobOrFindExisting, type JobRecord, type NewJob } from '../db/jobs';
import { lockOwnerAndCountOpenJobs, takeCreateToken } from '../db/ownerLimits';
import { inTransaction, type Pool, type Queryable } from '../db/pool';
import { limitsOf, type OwnerLimits, type OwnerLimitSettings } from '../domain/ownerLimits';
import { ServiceError } from './errors';

/** The owner's create bucket is empty: no new job until it refills. */
export class CreateRateLimitedError extends ServiceError {
  constructor(
    readonly retryAfterSeconds: number,
    bucket: { perSecond: number; burst: number },
  ) {
    super(
      'create-rate-limited',
      `This owner may create ${bucket.perSecond} jobs per second (bursts of ${bucket.burst}); retry after ${retryAfterSeconds} s. Retries of jobs already created are still answered.`,
      { retryAfterSeconds, createsPerSecond: bucket.perSecond, createBurst: bucket.burst },
    );
    this.name = 'CreateRateLimitedError';
  }
}

/** The owner has as many jobs open as it may: a new one waits until one of them ends. */
export class TooManyOpenJobsError extends ServiceError {
  constructor(maxOpenJobs: number) {
    super(
      'too-many-open-jobs',
      `This owner may have ${maxOpenJobs} jobs open (not yet ended) at once; create again once some have ended. Retries of jobs already created are still answered.`,
      { maxOpenJobs },
    );
    this.name = 'TooManyOpenJobsError';
  }
}

async function takeToken(db: Queryable, ownerId: string, limits: OwnerLimits): Promise<void> {
  if (!limits.creates) return;
  const take = await takeCreateToken(db, ownerId, limits.creates);
  if (!take.taken) throw new CreateRateLimitedError(take.retryAfterSeconds, limits.creates);
}

/**
 * Inserts a new job within its owner's limits (a token from the create bucket; room under the
 * open-jobs limit), or finds the job already under the same key. Only a request that would make
 * a new job is limited: an owner with limits has its replays found before any token is taken.
 * An owner without limits has the insert-or-find alone, which answers both in one statement.
 */
export async function insertJobWithinLimits(
  deps: { pool: Pool; ownerLimits?: OwnerLimitSettings },
  job: NewJob,
): Promise<{ job: JobRecord; created: boolean }> {
  const limits = limitsOf(deps.ownerLimits, job.ownerId);
  const { maxOpenJobs } = limits;
  if (!limits.creates && maxOpenJobs === undefined) return insertJobOrFindExisting(deps.pool, job);
  const stored = await findJobByKey(deps.pool, job.ownerId, job.idempotencyKey);
  if (stored) return { job: stored, created: false };
  // The token first, on its own: a create over the rate is refused without holding a connection
  // in a transaction or queueing on the owner's lock, so a flood from one owner cannot take the
  // pool from the others. (A create then refused for open jobs has spent its token.)
  await takeToken(deps.pool, job.ownerId, limits);
  if (maxOpenJobs === undefined) return insertJobOrFindExisting(deps.pool, job);
  // Count and insert under the owner's lock, in one transaction: two replicas' creates cannot
  // both see room for the last open job.
  return inTransaction(deps.pool, async (client) => {
    const open = await lockOwnerAndCountOpenJobs(client, job.ownerId, maxOpenJobs);
    if (open >= maxOpenJobs) throw new TooManyOpenJobsError(maxOpenJobs);
    return insertJobOrFindExisting(client, job);
  });
}
