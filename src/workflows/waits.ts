/** The durable waits of the attempt loops: before a retry, and for a provider passed by. */
import { condition } from '@temporalio/workflow';
import type { JobPlan, PlannedProvider } from './definitions';
import { continueAsNewIfLarge } from './handOver';
import type { JobRun } from './jobRun';
import type { PlannedRetry } from './retryPolicy';

/**
 * The wait before a retry: a durable timer (a worker restart neither loses nor shortens it),
 * shown on the job. A user's request meanwhile is served at once, instead of the retry.
 */
export async function waitToRetry(
  job: JobRun,
  admitted: JobPlan,
  retry: PlannedRetry & { noted?: boolean },
): Promise<boolean> {
  const retryAt = new Date(Date.now() + retry.delayMs).toISOString();
  // The note is written before the status says "retrying", so whoever sees one finds the other
  // (a retry taken over from a closed run was noted by it).
  if (!retry.noted)
    await job.db.noteOnJob({
      jobId: admitted.jobId,
      note: {
        event: 'retry_scheduled',
        provider: retry.provider.name,
        afterAttempt: job.attempts.at(-1)?.attemptId,
        nextTry: retry.nextTry,
        delayMs: retry.delayMs,
        retryAt,
        cause: retry.cause,
        reason: retry.description,
      },
    });
  job.show('running', retry.description);
  await condition(
    () => job.terminal !== null || job.requests.pending() !== undefined,
    retry.delayMs,
    { summary: retry.description },
  );
  return !job.terminal && job.requests.pending() === undefined;
}

/**
 * Nothing else is left, but a provider the plan passed by (cooling down, breaker open) takes
 * attempts again later: wait for the earliest on a durable timer, then it is next. Never fail a
 * job because of it; the job's attempt cap still bounds what it tries.
 */
export async function waitForDeferred(
  job: JobRun,
  admitted: JobPlan,
): Promise<PlannedProvider | undefined> {
  const deferred = job.deferrals.earliest();
  if (!deferred || job.attempts.length >= admitted.maxAttempts) return undefined;
  const provider = admitted.compatible.find((p) => p.name === deferred.provider);
  if (!provider) return undefined;
  await continueAsNewIfLarge(job, admitted);
  const waitMs = Math.max(100, Date.parse(deferred.until) - Date.now());
  job.show(
    job.attempts.length > 0 ? 'running' : 'pending',
    `waiting for ${provider.name} until ${deferred.until}: ${deferred.reason}`,
  );
  await condition(() => job.terminal !== null || job.requests.pending() !== undefined, waitMs, {
    summary: `waiting for ${provider.name}`,
  });
  job.deferrals.over(provider.name);
  return job.terminal || job.requests.pending() ? undefined : provider;
}
