import { findJobByKey, insertJobOrFindExisting, type JobRecord, type NewJob } from '../db/jobs';
import { lockOwnerAndCountOpenJobs, peekToken, takeToken, type TokenTake } from '../db/ownerLimits';
import { inTransaction, type Pool } from '../db/pool';
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

/** The owner's webhook requests are over their rate: none until the bucket refills. */
export class WebhookRateLimitedError extends ServiceError {
  constructor(
    readonly retryAfterSeconds: number,
    bucket: { perSecond: number; burst: number },
  ) {
    super(
      'webhook-rate-limited',
      `This owner may make ${bucket.perSecond} requests per second to the webhook routes (bursts of ${bucket.burst}); retry after ${retryAfterSeconds} s.`,
      { retryAfterSeconds, requestsPerSecond: bucket.perSecond, requestBurst: bucket.burst },
    );
    this.name = 'WebhookRateLimitedError';
  }
}

/** Takes a token of the owner's webhook-request bucket, or refuses the request. */
export async function takeWebhookRequest(
  deps: { pool: Pool; ownerLimits?: OwnerLimitSettings },
  ownerId: string,
): Promise<void> {
  const bucket = limitsOf(deps.ownerLimits, ownerId).webhookRequests;
  if (!bucket) return;
  const take = await takeToken(deps.pool, ownerId, 'webhooks', bucket);
  if (!take.taken) throw new WebhookRateLimitedError(take.retryAfterSeconds, bucket);
}

const refusedCreate = (take: TokenTake, limits: OwnerLimits): void => {
  if (!take.taken && limits.creates)
    throw new CreateRateLimitedError(take.retryAfterSeconds, limits.creates);
};

/**
 * Inserts a new job within its owner's limits (a token from the create bucket; room under the
 * open-jobs limit), or finds the job already under the same key. Only a request that makes a new
 * job is limited, and only it takes a token: the token is taken after the insert, in its
 * transaction, so that the copies of one request sent at once (a double click, a storm of
 * retries) wait on the first one's insert and get its job, never a refusal or a spent token.
 * An owner without limits has the insert-or-find alone, which answers both in one statement.
 */
export async function insertJobWithinLimits(
  deps: { pool: Pool; ownerLimits?: OwnerLimitSettings },
  job: NewJob,
): Promise<{ job: JobRecord; created: boolean }> {
  const limits = limitsOf(deps.ownerLimits, job.ownerId);
  const { maxOpenJobs, creates } = limits;
  if (!creates && maxOpenJobs === undefined) return insertJobOrFindExisting(deps.pool, job);
  const stored = await findJobByKey(deps.pool, job.ownerId, job.idempotencyKey);
  if (stored) return { job: stored, created: false };
  // An empty bucket refuses before any transaction; and one owner's creates wait for a place in
  // this process before they take a connection, so a flood from one owner (each create queueing
  // on the owner's lock or its bucket's row) cannot take the pool from the others.
  if (creates) refusedCreate(await peekToken(deps.pool, job.ownerId, 'creates', creates), limits);
  return createGates.run(job.ownerId, () => insertInTransaction(deps.pool, job, limits));
}

/** Create transactions one owner may have open at once in one API process. */
export const CREATE_TRANSACTIONS_PER_OWNER = 4;

/** Per key, at most `limit` runs at once; the others wait their turn, in order. */
class KeyedGates {
  private readonly running = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let gate = this.running.get(key);
    if (!gate) this.running.set(key, (gate = { active: 0, waiting: [] }));
    const held = gate;
    if (held.active >= this.limit) await new Promise<void>((go) => held.waiting.push(go));
    else held.active += 1;
    try {
      return await work();
    } finally {
      const next = held.waiting.shift();
      // The place goes straight to the next in line; the last one out forgets the key.
      if (next) next();
      else if (--held.active === 0) this.running.delete(key);
    }
  }
}

const createGates = new KeyedGates(CREATE_TRANSACTIONS_PER_OWNER);

/** The insert, its open-jobs count and its token, in one transaction (insertJobWithinLimits). */
async function insertInTransaction(
  pool: Pool,
  job: NewJob,
  limits: OwnerLimits,
): Promise<{ job: JobRecord; created: boolean }> {
  const { maxOpenJobs, creates } = limits;
  return inTransaction(pool, async (client) => {
    if (maxOpenJobs !== undefined) {
      // Counted and inserted under the owner's lock: two replicas' creates cannot both see room
      // for the last open job. (A copy refused here finds its job once refused: createJob.)
      const open = await lockOwnerAndCountOpenJobs(client, job.ownerId, maxOpenJobs);
      if (open >= maxOpenJobs) throw new TooManyOpenJobsError(maxOpenJobs);
    }
    const inserted = await insertJobOrFindExisting(client, job);
    if (inserted.created && creates)
      refusedCreate(await takeToken(client, job.ownerId, 'creates', creates), limits);
    return inserted;
  });
}
