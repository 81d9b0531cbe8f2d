import { condition } from '@temporalio/workflow';
import { IN_FLIGHT_ATTEMPT_STATES } from '../domain/job';
import type { AttemptToRun } from './attemptRequests';
import type { JobPlan } from './definitions';
import type { JobRun } from './jobRun';
import { anotherAttemptPossible } from './policy';
import { reconcile } from './reconcile';
import { runAttempt } from './runAttempt';
import { waitForDeferred } from './waits';

/** Looks at attempts someone nudged about (a callback, a late answer) while calls still run. */
async function lookAtNudged(job: JobRun): Promise<void> {
  for (const attemptId of [...job.nudged]) {
    job.nudgeServed(attemptId);
    const summary = job.attempt(attemptId);
    if (!summary || !IN_FLIGHT_ATTEMPT_STATES.includes(summary.state)) continue;
    const found = await job.db.reconcileAttempt({ attemptId });
    // Only what the database settled: a call still running reports when it ends.
    if (found.state !== 'running') job.apply(attemptId, found);
  }
}

/** A hedged job: after a delay of silence the next provider starts too; the first CAS wins. */
export async function runHedged(job: JobRun, admitted: JobPlan): Promise<void> {
  let settledCount = 0;
  // A launched attempt that failed in a way no retry heals: the loop rethrows it.
  let broken: unknown;
  const launch = (next: AttemptToRun): void => {
    job.track(runAttempt(job, admitted, next)).then(
      () => void (settledCount += 1),
      (error: unknown) => {
        broken ??= error;
        settledCount += 1;
      },
    );
  };
  while (!job.terminal) {
    if (broken) throw broken;
    const nextExists = anotherAttemptPossible(
      admitted,
      job.attemptsTaken(),
      job.nextInPlan,
      job.requests.pending() !== undefined,
    );
    if (job.runningAttempts.size === 0) {
      const next = nextExists || job.requests.pending() ? job.nextProvider(admitted) : undefined;
      if (next) {
        launch(next);
        continue;
      }
      if (job.requests.pending()) continue;
      // Nothing running and nobody left to ask: wait out the unknown ones, or for a provider
      // the plan passed by, or fail.
      const unknown = job.attempts.find((a) => a.state === 'unknown');
      if (!unknown && job.deferrals.size > 0) {
        const later = await waitForDeferred(job, admitted);
        if (later) launch({ provider: later });
        else if (!job.terminal && !job.requests.pending()) break;
        continue;
      }
      if (!unknown) break;
      await reconcile(job, admitted, unknown);
      continue;
    }
    const before = settledCount;
    const woken = (): boolean =>
      job.terminal !== null ||
      settledCount !== before ||
      job.requests.pending() !== undefined ||
      job.nudged.size > 0;
    const timedOut = nextExists
      ? !(await condition(woken, admitted.hedgeDelayMs, {
          summary: `hedge delay ${admitted.hedgeDelayMs} ms`,
        }))
      : (await condition(woken), false);
    if (job.nudged.size > 0) await lookAtNudged(job);
    if (job.terminal) break;
    if (timedOut || settledCount !== before || job.requests.pending() !== undefined) {
      const next = job.nextProvider(admitted);
      if (next) launch(next);
    }
  }
  // The losers: stop waiting for them, and let each settle its row before the workflow ends.
  for (const scope of job.runningCalls.values()) scope.cancel();
  await Promise.all(job.runningAttempts);
}
