/** What admission finds and writes of a job's attempts: those left in flight, and attempt 1. */
import { createAttempt, type AttemptRecord } from '../db/attempts';
import { settleAbandonedAttempt } from '../db/attemptSettlement';
import { WorstCaseNeeded } from '../db/budgetGate';
import type { JobRecord } from '../db/jobs';
import type { Queryable } from '../db/pool';
import { isRefusal } from '../domain/failures';
import type { FailedCall } from '../domain/retries';
import { breakerCoolOffMs } from '../providers/provider';
import { attemptSummary } from '../service/results';
import type { AttemptSummary, LastFailure } from '../workflows/definitions';
import type { ActivityDeps, JobPlan } from './types';

/**
 * The job's last attempt when it failed and the job is open, as a new run weighs it for a
 * retry (retryPolicy.ts resumedRetry): what its record says of its failure, and when the run
 * that made it planned to try again, if it noted that before it closed.
 */
export function lastFailureOf(
  job: JobRecord,
  attempts: readonly AttemptRecord[],
): LastFailure | undefined {
  const last = attempts.at(-1);
  if (!last || last.state !== 'failed' || job.terminalStatus) return undefined;
  const error = (last.error ?? {}) as Record<string, unknown>;
  const noted = [...job.notes]
    .reverse()
    .find(
      (note) =>
        (note as { event?: unknown }).event === 'retry_scheduled' &&
        (note as { afterAttempt?: unknown }).afterAttempt === last.id,
    ) as { retryAt?: unknown } | undefined;
  const detail = error.provider;
  return {
    attemptId: last.id,
    failure: {
      code: error.code,
      httpStatus: error.httpStatus,
      ...(typeof detail === 'object' && detail !== null
        ? { provider: detail as FailedCall['provider'] }
        : {}),
    },
    ...(typeof noted?.retryAt === 'string' ? { retryAt: noted.retryAt } : {}),
  };
}

/**
 * Attempts an earlier admission or run of this job's workflow left in flight. Attempt 1 still
 * `starting`, alone, on the plan's primary and in this mode, is the one an admission wrote
 * and nothing sent yet (admission ran again: a lost workflow task, a worker that died after
 * the write): it is reused as this admission's first attempt, since beginProviderCall lets
 * only one call ever send it (never on a job that has ended: `first` is then undefined). Any
 * other `starting` one never sent anything and is `failed` (`cancelled` on an ended job); a
 * `running` one may have, so it is `unknown` and will be reconciled.
 */
export async function adoptAttempts(
  db: Queryable,
  found: readonly AttemptRecord[],
  first: { provider: string; exclusive: boolean } | undefined,
): Promise<{
  attempts: AttemptSummary[];
  reusable?: AttemptSummary;
  /** The attempts' rows as adoption left them. */
  adopted: AttemptRecord[];
}> {
  const [only] = found;
  if (
    found.length === 1 &&
    only &&
    only.seq === 1 &&
    only.state === 'starting' &&
    first &&
    only.provider === first.provider &&
    only.exclusive === first.exclusive
  )
    return { attempts: [], reusable: attemptSummary(only), adopted: [] };
  const adopted: AttemptRecord[] = [];
  for (const attempt of found) {
    adopted.push(
      attempt.state === 'starting' || attempt.state === 'running'
        ? await settleAbandonedAttempt(db, attempt.id, {
            code: 'orphaned',
            message: 'an earlier run of the job workflow ended while this attempt was in flight',
          })
        : attempt,
    );
  }
  return { attempts: adopted.map(attemptSummary), adopted };
}

/**
 * Attempt 1's row, written at admission so that the workflow's first provider call needs no
 * activity task before it. Anything unusual (the job was settled meanwhile, an attempt
 * appeared) leaves it to the workflow's own `startAttempt`, which reports it as it always has.
 */
export async function startFirstAttempt(
  { providers }: Pick<ActivityDeps, 'providers'>,
  tx: Queryable,
  jobId: string,
  provider: string,
  mode: JobPlan['mode'],
): Promise<AttemptSummary | undefined> {
  // Its own savepoint: a refusal must not undo the rest of admission's transaction.
  await tx.query('SAVEPOINT first_attempt');
  try {
    const attempt = await createAttempt(tx, {
      jobId,
      seq: 1,
      provider,
      exclusive: mode === 'exclusive',
      coolOffMs: breakerCoolOffMs(providers.get(provider).config),
    });
    await tx.query('RELEASE SAVEPOINT first_attempt');
    return attemptSummary(attempt);
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT first_attempt');
    // A budgeted owner's attempt (it needs a worst case, or does not fit) is left to the
    // workflow's startAttempt too, which works the worst case out and says what a refusal means.
    if (
      error instanceof WorstCaseNeeded ||
      isRefusal(error, 'jobNotOpen', 'attemptInFlight', 'providerUnavailable', 'budgetExceeded')
    )
      return undefined;
    throw error;
  }
}
