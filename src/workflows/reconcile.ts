import { condition } from '@temporalio/workflow';
import { markdownText } from '../domain/displayText';
import { callOperator } from './announcements';
import type { AttemptSummary, JobPlan, ReconcileOutcome } from './definitions';
import { continueAsNewIfLarge } from './handOver';
import type { JobRun } from './jobRun';
import { RECHECKS_BY_RECONCILER, COMPLETION_WEBHOOKS } from './patches';
import {
  blockedDescription,
  blockedSelfLookMs,
  firstReconcileDelayMs,
  nextReconcileDelayMs,
  operatorDueAt,
  reconcileWaitMs,
} from './policy';

/**
 * Waits until an unknown attempt settles (late result, status lookup, callback, operator).
 * Runs since RECHECKS_BY_RECONCILER sleep between their looks: the workers' reconciler looks
 * on the backoff and wakes the run when it matters, so a blocked run neither runs nor grows
 * its history, and need not stay cached. Older runs keep their own timers, as recorded.
 */
export async function reconcile(
  job: JobRun,
  admitted: JobPlan,
  unknown: AttemptSummary,
): Promise<void> {
  const { attemptId } = unknown;
  const since = job.unknownSince(attemptId);
  const sleeps = job.patched(RECHECKS_BY_RECONCILER);
  const webhooks = job.patched(COMPLETION_WEBHOOKS);
  const callOperatorAt = operatorDueAt(admitted, since);
  let delayMs = firstReconcileDelayMs(admitted);
  // An operator's resolution may settle the attempt while this waits: the run's word counts.
  let summary = unknown;
  while (summary.state === 'unknown' && !job.terminal) {
    // A nudge is served by the look that starts after it: one that arrives while the look
    // runs (delivered with its result, say) wakes the next look. Older runs served it after
    // the look, and their own timers made up for a nudge lost that way.
    if (sleeps) job.nudgeServed(attemptId);
    const found: ReconcileOutcome = await job.db.reconcileAttempt({ attemptId });
    if (!sleeps) job.nudgeServed(attemptId);
    summary = job.apply(attemptId, found);
    if (summary.state !== 'unknown' || job.terminal) return;
    job.show(
      'unknown',
      blockedDescription(summary, since, found.detail),
      found.needsOperator === true,
      blockedDescription(summary, since, found.detail && markdownText(found.detail)),
    );
    // Hedged jobs serve a user's request at once, even while one attempt is unknown.
    const requested = (): boolean =>
      admitted.mode === 'hedged' && job.requests.pending() !== undefined;
    if (requested()) return;
    if (
      webhooks &&
      !job.operatorCalledFor(attemptId) &&
      (found.needsOperator || Date.now() >= callOperatorAt)
    )
      await callOperator(job, admitted.jobId, attemptId);
    await continueAsNewIfLarge(job, admitted);
    const lookMs = sleeps
      ? blockedSelfLookMs(admitted)
      : reconcileWaitMs(delayMs, found.recheckInMs);
    // Until the operator has been called for, the run also wakes when that is due.
    const untilOperatorCall = webhooks && !job.operatorCalledFor(attemptId);
    await condition(
      () => job.nudged.has(attemptId) || job.terminal !== null || requested(),
      untilOperatorCall ? Math.max(1, Math.min(lookMs, callOperatorAt - Date.now())) : lookMs,
      { summary: `reconcile attempt ${summary.seq} on ${summary.provider}` },
    );
    delayMs = nextReconcileDelayMs(delayMs, admitted);
    summary = job.attempt(attemptId) ?? summary;
  }
}
