import { LATE_WINDOW_EXCEEDED } from '../domain/retries';
import type { AttemptToRun } from './attemptRequests';
import type { AttemptSummary, JobPlan } from './definitions';
import type { JobRun } from './jobRun';
import { LATE_WINDOW_RETRIED } from './patches';
import { reconcile } from './reconcile';
import { retryAfterFailure, type PlannedRetry } from './retryPolicy';
import { runAttempt } from './runAttempt';
import { waitForDeferred, waitToRetry } from './waits';

/** A retry as the exclusive loop holds it: noted on the job already, when a closed run did. */
export type RetryToMake = PlannedRetry & { noted?: boolean };

/** Runs one attempt of an exclusive job; says how it is retried if its call's failure may heal. */
async function runThenJudge(
  job: JobRun,
  admitted: JobPlan,
  next: AttemptToRun,
): Promise<PlannedRetry | undefined> {
  const before = job.attempts.length;
  await job.track(runAttempt(job, admitted, next));
  const last = job.attempts.at(-1);
  // No attempt was made (the provider took none now): nothing to judge.
  if (!last || job.terminal || job.attempts.length === before) return undefined;
  const failure = job.failedCall(last.attemptId);
  return retryAfterFailure(admitted, job.attempts, last, failure, Math.random, job.retryRules);
}

/**
 * A call without side effects that outlived its attempt's timeout and was cut off when its
 * late-result window closed: its own failure, settled while the attempt was unknown, and
 * retried like a timeout (runs recorded before the patch moved on to the next provider).
 */
function retryOfCallCutOff(
  job: JobRun,
  admitted: JobPlan,
  settled: AttemptSummary,
): PlannedRetry | undefined {
  const last = job.attempts.at(-1);
  if (job.terminal || last?.attemptId !== settled.attemptId || last.state !== 'failed')
    return undefined;
  const failure = job.failedCall(last.attemptId);
  if (failure?.code !== LATE_WINDOW_EXCEEDED || !job.patched(LATE_WINDOW_RETRIED)) return undefined;
  return retryAfterFailure(admitted, job.attempts, last, failure, Math.random, job.retryRules);
}

/**
 * An exclusive job: one attempt at a time, and an unknown one blocks everything after it until
 * it settles. `resumed` is the retry of a closed run's last attempt, taken over by this one.
 */
export async function runExclusive(
  job: JobRun,
  admitted: JobPlan,
  resumed?: PlannedRetry & { noted?: true },
): Promise<void> {
  let retry: RetryToMake | undefined = resumed;
  while (!job.terminal) {
    const blocked = job.attempts.find((a) => a.state === 'unknown');
    // planted-bug site (tools/chaos/plantedBugs.ts): exclusive-ignores-unknown
    if (blocked) {
      await reconcile(job, admitted, blocked);
      retry = retryOfCallCutOff(job, admitted, blocked);
      continue;
    }
    const waited = retry;
    retry = undefined;
    if (waited && (await waitToRetry(job, admitted, waited))) {
      retry = await runThenJudge(job, admitted, { provider: waited.provider });
      continue;
    }
    if (job.terminal) break;
    const next = job.nextProvider(admitted);
    if (next) {
      retry = await runThenJudge(job, admitted, next);
      continue;
    }
    if (job.deferrals.size === 0) break;
    const later = await waitForDeferred(job, admitted);
    if (later) retry = await runThenJudge(job, admitted, { provider: later });
    else if (!job.terminal && !job.requests.pending()) break;
  }
}
