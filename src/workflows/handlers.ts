import { condition, isCancellation, setHandler } from '@temporalio/workflow';
import { markdownText } from '../domain/displayText';
import { FAILURES, KEY_REUSE_MESSAGE } from '../domain/failures';
import { nonCancellable } from './activityStubs';
import type { AttemptRequest } from './attemptRequests';
import {
  admissionQuery,
  admitUpdate,
  attemptSettledSignal,
  cancelJobUpdate,
  requestAttemptUpdate,
  resolutionResult,
  resolveAttemptUpdate,
  statusQuery,
  type AttemptOutcome,
} from './definitions';
import type { JobRun } from './jobRun';
import {
  attemptRequestRefusal,
  cancelledBy,
  notCancelledMessage,
  notOpenRefusal,
  resolutionRefusal,
  settledMeanwhileRefusal,
} from './policy';
import { failureOf, refuse, refuseIf } from './refusals';

/**
 * What the job workflow answers from outside: its status and admission queries, the `admit`
 * update of a Temporal-native start, late-result nudges, users' "try again", operators'
 * resolutions and cancels. Validators refuse at once (no history event); handlers act on the run.
 */
export function installHandlers(run: JobRun): void {
  setHandler(statusQuery, () => run.status);
  setHandler(admissionQuery, () => ({
    jobId: run.jobId,
    requestFingerprint: run.plan?.requestFingerprint ?? run.input.requestFingerprint ?? null,
  }));
  setHandler(
    admitUpdate,
    async ({ requestFingerprint }) => {
      await condition(
        () => (run.jobId !== null && run.plan !== undefined) || run.admissionError !== undefined,
      );
      if (run.admissionError) refuse(run.admissionError.type, run.admissionError.message);
      if (run.plan && requestFingerprint !== run.plan.requestFingerprint)
        refuse(FAILURES.idempotencyKeyReuse, KEY_REUSE_MESSAGE);
      return { jobId: run.admittedJobId(), ended: run.terminal !== null };
    },
    {
      validator: ({ requestFingerprint }) => {
        // Known at start, or once admitted; a child started without one is checked in the handler.
        const known = run.plan?.requestFingerprint ?? run.input.requestFingerprint;
        if (known !== undefined && requestFingerprint !== known)
          refuse(FAILURES.idempotencyKeyReuse, KEY_REUSE_MESSAGE);
      },
    },
  );
  setHandler(attemptSettledSignal, ({ attemptId }) => run.nudge(attemptId));

  setHandler(
    requestAttemptUpdate,
    async (request) => {
      const entry: AttemptRequest = { provider: request.provider, claimed: false };
      run.requests.ask(entry);
      await condition(
        () => entry.created !== undefined || entry.refused !== undefined || run.terminal !== null,
      );
      run.requests.withdraw(entry);
      if (entry.refused) refuse(entry.refused.type, entry.refused.message);
      if (!entry.created)
        refuse(FAILURES.jobTerminal, `job ${run.jobId} ended before the attempt could start`);
      return entry.created;
    },
    {
      validator: (request) =>
        refuseIf(
          attemptRequestRefusal(
            {
              jobId: run.jobId,
              plan: run.plan,
              terminal: run.terminal,
              attempts: run.attempts,
              requestWaiting: run.requests.waiting(),
            },
            request,
          ),
        ),
    },
  );

  setHandler(
    resolveAttemptUpdate,
    async (resolution) => {
      const { attemptId } = resolution;
      // The validator found the attempt; the run replaces its summary as it changes.
      const current = () => run.attempt(attemptId)!;
      // The database may already say `unknown` while this workflow still waits for the call's
      // end: wait for it, then decide on what the attempt really is.
      await condition(() => current().state !== 'starting' && current().state !== 'running');
      refuseIf(settledMeanwhileRefusal(current()));
      let outcome: AttemptOutcome;
      try {
        outcome = await run.db.resolveAttempt(resolution);
      } catch (error) {
        // The workflow is being cancelled: the update ends with it (the API then settles the
        // attempt without the workflow), rather than as a failed resolution.
        if (isCancellation(error)) throw error;
        const failure = failureOf(error);
        refuse(failure?.type ?? FAILURES.resolveFailed, failure?.message ?? 'resolution failed');
      }
      const settled = run.apply(attemptId, outcome);
      run.nudge(attemptId);
      // A `failed` while the call may still land is held on the attempt, which stays unknown.
      return resolutionResult(attemptId, settled.state, resolution.outcome);
    },
    {
      validator: (resolution) => refuseIf(resolutionRefusal(run.attempts, resolution)),
    },
  );

  setHandler(
    cancelJobUpdate,
    async (cancellation) => {
      run.end(
        await nonCancellable(() =>
          run.db.cancelJob({ jobId: run.admittedJobId(), ...cancellation }),
        ),
      );
      // Stop waiting for running calls; whatever they still bring back loses the CAS.
      for (const scope of run.runningCalls.values()) scope.cancel();
      if (run.terminal !== 'cancelled')
        // Settled behind this workflow's back (a late result, a callback): that outcome stands.
        refuse(FAILURES.jobTerminal, notCancelledMessage(run.jobId, run.terminal ?? 'ended'));
      run.show(
        'cancelled',
        `done: cancelled by ${cancelledBy(cancellation)} (${cancellation.reason})`,
        false,
        `done: cancelled by ${markdownText(cancelledBy(cancellation))} (${markdownText(cancellation.reason)})`,
      );
      return run.status;
    },
    {
      validator: (_cancellation) => refuseIf(notOpenRefusal(run)),
    },
  );
}
