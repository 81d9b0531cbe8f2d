import { CancellationScope } from '@temporalio/workflow';
import { FAILURES, failureDetails } from '../domain/failures';
import type { AttemptState } from '../domain/job';
import { nonCancellable, providerCall } from './activityStubs';
import type { AttemptToRun } from './attemptRequests';
import type { AttemptSummary, JobPlan } from './definitions';
import type { JobRun } from './jobRun';
import { abandonment, failureOf } from './refusals';

/** One attempt: its row, its single provider call, and what the call came to. */
export async function runAttempt(
  job: JobRun,
  admitted: JobPlan,
  { provider, request, created: written }: AttemptToRun,
): Promise<void> {
  // The number is taken now, before the row is written: a hedge launched while this row is
  // still being written (a slow database) must not take the same number.
  const seq = job.takeAttemptNumber();
  let created: { id: string; state: AttemptState };
  try {
    created = written
      ? { id: written.attemptId, state: written.state }
      : await job.db.startAttempt({
          jobId: admitted.jobId,
          seq,
          provider: provider.name,
          exclusive: admitted.mode === 'exclusive',
        });
  } catch (error) {
    const failure = failureOf(error);
    if (failure?.type === FAILURES.providerUnavailable) {
      // Cooling down or its breaker is open: nothing was written; the plan passes it by.
      const details = failureDetails(failure, 'providerUnavailable');
      job.deferrals.defer(provider.name, {
        until: details?.until ?? new Date(Date.now() + 1_000).toISOString(),
        reason: details?.reason ?? failure.message,
      });
      if (request)
        job.requests.refuse(request, {
          type: FAILURES.providerUnavailable,
          message: failure.message,
        });
      return;
    }
    if (failure?.type === FAILURES.jobNotOpen) {
      // The job was settled meanwhile (a cancel, a winner this workflow had not heard of).
      const details = failureDetails(failure, 'jobNotOpen');
      job.end({
        status: details?.terminalStatus ?? null,
        completedBy: details?.completedBy ?? null,
      });
      if (request)
        job.requests.refuse(request, { type: FAILURES.jobTerminal, message: failure.message });
      return;
    }
    throw error;
  } finally {
    job.attemptNumberSettled(seq);
  }
  const summary: AttemptSummary = {
    attemptId: created.id,
    seq,
    provider: provider.name,
    state: created.state,
  };
  job.attemptWritten(summary, request);
  job.show('running', `attempt ${seq} on ${provider.name} is running`);

  const scope = new CancellationScope();
  job.callStarted(summary.attemptId, scope);
  try {
    job.apply(
      summary.attemptId,
      await scope.run(() => providerCall(provider, seq)({ attemptId: summary.attemptId })),
    );
  } catch (error) {
    // Timed out, cancelled, or the worker died: the call may still be running at the provider.
    const abandoned = abandonment(error);
    job.apply(
      summary.attemptId,
      await nonCancellable(() =>
        job.db.abandonAttempt({ attemptId: summary.attemptId, error: abandoned }),
      ),
    );
  } finally {
    job.callEnded(summary.attemptId);
  }
}
