import { RetryState } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  makeContinueAsNewFunc,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { markdownText } from '../domain/displayText';
import { FAILURES, failureDetails } from '../domain/failures';
import { IN_FLIGHT_ATTEMPT_STATES, type AttemptState, type TerminalJobStatus } from '../domain/job';
import { intentShapeRefusal } from '../domain/jsonShape';
import { LATE_WINDOW_EXCEEDED } from '../domain/retries';
import { nonCancellable, providerCall, webhookLookup } from './activityStubs';
import type {
  AttemptSummary,
  JobPlan,
  JobWorkflowInput,
  JobWorkflowResult,
  PlannedProvider,
  ReconcileOutcome,
} from './definitions';
import { installHandlers } from './handlers';
import { JobRun, type AttemptRequest } from './jobRun';
import {
  anotherAttemptPossible,
  blockedDescription,
  blockedSelfLookMs,
  exhaustedFailure,
  firstReconcileDelayMs,
  nextReconcileDelayMs,
  operatorDueAt,
  reconcileWaitMs,
  resumedRetry,
  retryAfterFailure,
  shouldContinueAsNew,
  type PlannedRetry,
  type RetryRuleChanges,
} from './policy';
import { TEMPORAL_CANCEL, abandonment, failureOf, refuse } from './refusals';
import { COMPLETION_WEBHOOKS, startWebhookSender } from './webhookSender';

/** Patch id of leaving the looks at a blocked job's unknown attempt to the workers' reconciler. */
const RECHECKS_BY_RECONCILER = 'rechecks-by-reconciler';

/** Patch id of refusing an intent of a bad shape before admission (runs that began without it admitted it). */
const INTENT_SHAPE_CHECK = 'intent-shape-check';

/**
 * Patch ids of the retry table's later rules (policy.ts RetryRuleChanges): a retry leaves room
 * for the plan's untried providers (runs recorded before it retried while any room was left),
 * an attempt whose call never began is retried (runs recorded before it moved on), and so is a
 * call cut off at its late-result window (runs recorded before it moved on).
 */
export const RETRY_LEAVES_ROOM = 'retry-leaves-room-for-fallbacks';
export const NEVER_SENT_RETRIED = 'never-sent-retried';
export const LATE_WINDOW_RETRIED = 'late-window-retried';
const RETRY_RULES: RetryRuleChanges = {
  retryLeavesRoomForFallbacks: () => patched(RETRY_LEAVES_ROOM),
  neverSentIsRetried: () => patched(NEVER_SENT_RETRIED),
  lateWindowIsRetried: () => patched(LATE_WINDOW_RETRIED),
};

/**
 * Patch id of a new run retrying its closed run's last failed attempt as that run would have
 * (at the time it noted, if it did); runs recorded before it went on after that attempt.
 */
const RESUME_PLANNED_RETRY = 'resume-planned-retry';

/** Patch id of a run that finds its job ended at admission handing over the ending's events. */
const ANNOUNCE_FOUND_ENDING = 'announce-found-ending';

/**
 * One job, one workflow: admit the job, run its attempts (one at a time, or hedged), wait out
 * unknown ones, and end with the job row. What the run knows is a JobRun; what it answers from
 * outside is in handlers.ts; what it decides is in policy.ts.
 */
export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const carried = input.carried;
  const job = new JobRun(input);
  installHandlers(job);

  /**
   * Continues-as-new when the history has grown large: a job may wait in `unknown` for months.
   * Called only while nothing runs (no provider call in flight) and no request waits for the
   * loop, after every handler has finished, so the next run starts from a complete state.
   */
  async function continueAsNewIfLarge(admitted: JobPlan): Promise<void> {
    const info = workflowInfo();
    if (!shouldContinueAsNew(info, admitted)) return;
    await condition(allHandlersFinished);
    if (job.terminal || job.pendingRequest()) return;
    const next = makeContinueAsNewFunc<typeof jobWorkflow>({
      typedSearchAttributes: info.typedSearchAttributes,
    });
    await next({ ...input, carried: job.snapshot(admitted) });
  }

  /**
   * Waits until an unknown attempt settles (late result, status lookup, callback, operator).
   * Runs since RECHECKS_BY_RECONCILER sleep between their looks: the workers' reconciler looks
   * on the backoff and wakes the run when it matters, so a blocked run neither runs nor grows
   * its history, and need not stay cached. Older runs keep their own timers, as recorded.
   */
  async function reconcile(admitted: JobPlan, summary: AttemptSummary): Promise<void> {
    const since = job.unknownSince(summary.attemptId);
    const sleeps = patched(RECHECKS_BY_RECONCILER);
    const webhooks = patched(COMPLETION_WEBHOOKS);
    const callOperatorAt = operatorDueAt(admitted, since);
    let delayMs = firstReconcileDelayMs(admitted);
    while (summary.state === 'unknown' && !job.terminal) {
      // A nudge is served by the look that starts after it: one that arrives while the look
      // runs (delivered with its result, say) wakes the next look. Older runs served it after
      // the look, and their own timers made up for a nudge lost that way.
      if (sleeps) job.nudgeServed(summary.attemptId);
      const found: ReconcileOutcome = await job.db.reconcileAttempt({
        attemptId: summary.attemptId,
      });
      if (!sleeps) job.nudgeServed(summary.attemptId);
      job.apply(summary, found);
      if (summary.state !== 'unknown' || job.terminal) return;
      job.show(
        'unknown',
        blockedDescription(summary, since, found.detail),
        found.needsOperator === true,
        blockedDescription(summary, since, found.detail && markdownText(found.detail)),
      );
      // Hedged jobs serve a user's request at once, even while one attempt is unknown.
      const requested = (): boolean =>
        admitted.mode === 'hedged' && job.pendingRequest() !== undefined;
      if (requested()) return;
      if (
        webhooks &&
        !operatorsCalled.has(summary.attemptId) &&
        (found.needsOperator || Date.now() >= callOperatorAt)
      )
        await callOperator(admitted.jobId, summary.attemptId);
      await continueAsNewIfLarge(admitted);
      const lookMs = sleeps
        ? blockedSelfLookMs(admitted)
        : reconcileWaitMs(delayMs, found.recheckInMs);
      // Until the operator has been called for, the run also wakes when that is due.
      const untilOperatorCall = webhooks && !operatorsCalled.has(summary.attemptId);
      await condition(
        () => job.nudged.has(summary.attemptId) || job.terminal !== null || requested(),
        untilOperatorCall ? Math.max(1, Math.min(lookMs, callOperatorAt - Date.now())) : lookMs,
        { summary: `reconcile attempt ${summary.seq} on ${summary.provider}` },
      );
      delayMs = nextReconcileDelayMs(delayMs, admitted);
    }
  }

  /** Attempts this run has sent `job.needs_operator` for (the database keeps it to once anyway). */
  const operatorsCalled = new Set<string>();

  /** Tells the owner's webhooks that an attempt waits for an operator. */
  async function callOperator(jobId: string, attemptId: string): Promise<void> {
    operatorsCalled.add(attemptId);
    const { eventKey, retry } = await job.db.raiseNeedsOperator({ jobId, attemptId });
    if (eventKey) await startWebhookSender(jobId, eventKey, retry);
  }

  /**
   * Hands the job's ending events (written with the ending, migration 0016) to their senders,
   * which outlive this workflow: its result never waits for a receiver.
   */
  async function announceEnding(jobId: string): Promise<void> {
    if (!patched(COMPLETION_WEBHOOKS)) return;
    const { eventKeys, retry } = await webhookLookup.webhookEventsWaiting({ jobId });
    for (const eventKey of eventKeys) await startWebhookSender(jobId, eventKey, retry);
  }

  /** One attempt: its row, its single provider call, and what the call came to. */
  async function runAttempt(
    admitted: JobPlan,
    provider: PlannedProvider,
    request?: AttemptRequest,
    /** The attempt's row, when admission already wrote it. */
    written?: AttemptSummary,
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
        job.defer(provider.name, {
          until: details?.until ?? new Date(Date.now() + 1_000).toISOString(),
          reason: details?.reason ?? failure.message,
        });
        if (request)
          request.refused = { type: FAILURES.providerUnavailable, message: failure.message };
        return;
      }
      if (failure?.type === FAILURES.jobNotOpen) {
        // The job was settled meanwhile (a cancel, a winner this workflow had not heard of).
        const details = failureDetails(failure, 'jobNotOpen');
        job.end({
          status: details?.terminalStatus ?? null,
          completedBy: details?.completedBy ?? null,
        });
        if (request) request.refused = { type: FAILURES.jobTerminal, message: failure.message };
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
        summary,
        await scope.run(() => providerCall(provider, seq)({ attemptId: summary.attemptId })),
      );
    } catch (error) {
      // Timed out, cancelled, or the worker died: the call may still be running at the provider.
      const abandoned = abandonment(error);
      job.apply(
        summary,
        await nonCancellable(() =>
          job.db.abandonAttempt({ attemptId: summary.attemptId, error: abandoned }),
        ),
      );
    } finally {
      job.callEnded(summary.attemptId);
    }
  }

  /** Looks at attempts someone nudged about (a callback, a late answer) while calls still run. */
  async function lookAtNudged(): Promise<void> {
    for (const attemptId of [...job.nudged]) {
      job.nudgeServed(attemptId);
      const summary = job.attempts.find((a) => a.attemptId === attemptId);
      if (!summary || !IN_FLIGHT_ATTEMPT_STATES.includes(summary.state)) continue;
      const found = await job.db.reconcileAttempt({ attemptId });
      // Only what the database settled: a call still running reports when it ends.
      if (found.state !== 'running') job.apply(summary, found);
    }
  }

  /** Runs one attempt of an exclusive job; says how it is retried if its call's failure may heal. */
  async function runThenJudge(
    admitted: JobPlan,
    next: { provider: PlannedProvider; request?: AttemptRequest; created?: AttemptSummary },
  ): Promise<PlannedRetry | undefined> {
    const before = job.attempts.length;
    await job.track(runAttempt(admitted, next.provider, next.request, next.created));
    const last = job.attempts.at(-1);
    // No attempt was made (the provider took none now): nothing to judge.
    if (!last || job.terminal || job.attempts.length === before) return undefined;
    const failure = job.failedCall(last.attemptId);
    return retryAfterFailure(admitted, job.attempts, last, failure, Math.random, RETRY_RULES);
  }

  /**
   * A call without side effects that outlived its attempt's timeout and was cut off when its
   * late-result window closed: its own failure, settled while the attempt was unknown, and
   * retried like a timeout (runs recorded before the patch moved on to the next provider).
   */
  function retryOfCallCutOff(admitted: JobPlan, settled: AttemptSummary): PlannedRetry | undefined {
    const last = job.attempts.at(-1);
    if (job.terminal || last !== settled || last.state !== 'failed') return undefined;
    const failure = job.failedCall(last.attemptId);
    if (failure?.code !== LATE_WINDOW_EXCEEDED || !patched(LATE_WINDOW_RETRIED)) return undefined;
    return retryAfterFailure(admitted, job.attempts, last, failure, Math.random, RETRY_RULES);
  }

  /**
   * The wait before a retry: a durable timer (a worker restart neither loses nor shortens it),
   * shown on the job. A user's request meanwhile is served at once, instead of the retry.
   */
  async function waitToRetry(
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
      () => job.terminal !== null || job.pendingRequest() !== undefined,
      retry.delayMs,
      { summary: retry.description },
    );
    return !job.terminal && job.pendingRequest() === undefined;
  }

  /**
   * Nothing else is left, but a provider the plan passed by (cooling down, breaker open) takes
   * attempts again later: wait for the earliest on a durable timer, then it is next. Never fail a
   * job because of it; the job's attempt cap still bounds what it tries.
   */
  async function waitForDeferred(admitted: JobPlan): Promise<PlannedProvider | undefined> {
    const deferred = job.earliestDeferred();
    if (!deferred || job.attempts.length >= admitted.maxAttempts) return undefined;
    const provider = admitted.compatible.find((p) => p.name === deferred.provider);
    if (!provider) return undefined;
    await continueAsNewIfLarge(admitted);
    const waitMs = Math.max(100, Date.parse(deferred.until) - Date.now());
    job.show(
      job.attempts.length > 0 ? 'running' : 'pending',
      `waiting for ${provider.name} until ${deferred.until}: ${deferred.reason}`,
    );
    await condition(() => job.terminal !== null || job.pendingRequest() !== undefined, waitMs, {
      summary: `waiting for ${provider.name}`,
    });
    job.deferralOver(provider.name);
    return job.terminal || job.pendingRequest() ? undefined : provider;
  }

  async function runExclusive(
    admitted: JobPlan,
    /** The retry of a closed run's last attempt, taken over by this one (noted, if it was). */
    resumed?: PlannedRetry & { noted?: true },
  ): Promise<void> {
    // One attempt at a time; an unknown one blocks everything after it until it settles.
    let retry: (PlannedRetry & { noted?: boolean }) | undefined = resumed;
    while (!job.terminal) {
      const blocked = job.attempts.find((a) => a.state === 'unknown');
      // planted-bug site (tools/chaos/plantedBugs.ts): exclusive-ignores-unknown
      if (blocked) {
        await reconcile(admitted, blocked);
        retry = retryOfCallCutOff(admitted, blocked);
        continue;
      }
      const waited = retry;
      retry = undefined;
      if (waited && (await waitToRetry(admitted, waited))) {
        retry = await runThenJudge(admitted, { provider: waited.provider });
        continue;
      }
      if (job.terminal) break;
      const next = job.nextProvider(admitted);
      if (next) {
        retry = await runThenJudge(admitted, next);
        continue;
      }
      if (job.deferred.size === 0) break;
      const later = await waitForDeferred(admitted);
      if (later) retry = await runThenJudge(admitted, { provider: later });
      else if (!job.terminal && !job.pendingRequest()) break;
    }
  }

  async function runHedged(admitted: JobPlan): Promise<void> {
    // After a delay of silence the next provider starts too; the first CAS wins.
    let settledCount = 0;
    // A launched attempt that failed in a way no retry heals: the loop rethrows it.
    let broken: unknown;
    const launch = (next: {
      provider: PlannedProvider;
      request?: AttemptRequest;
      created?: AttemptSummary;
    }): void => {
      job.track(runAttempt(admitted, next.provider, next.request, next.created)).then(
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
        job.pendingRequest() !== undefined,
      );
      if (job.runningAttempts.size === 0) {
        const next = nextExists || job.pendingRequest() ? job.nextProvider(admitted) : undefined;
        if (next) {
          launch(next);
          continue;
        }
        if (job.pendingRequest()) continue;
        // Nothing running and nobody left to ask: wait out the unknown ones, or for a provider
        // the plan passed by, or fail.
        const unknown = job.attempts.find((a) => a.state === 'unknown');
        if (!unknown && job.deferred.size > 0) {
          const later = await waitForDeferred(admitted);
          if (later) launch({ provider: later });
          else if (!job.terminal && !job.pendingRequest()) break;
          continue;
        }
        if (!unknown) break;
        await reconcile(admitted, unknown);
        continue;
      }
      const before = settledCount;
      const woken = (): boolean =>
        job.terminal !== null ||
        settledCount !== before ||
        job.pendingRequest() !== undefined ||
        job.nudged.size > 0;
      const timedOut = nextExists
        ? !(await condition(woken, admitted.hedgeDelayMs, {
            summary: `hedge delay ${admitted.hedgeDelayMs} ms`,
          }))
        : (await condition(woken), false);
      if (job.nudged.size > 0) await lookAtNudged();
      if (job.terminal) break;
      if (timedOut || settledCount !== before || job.pendingRequest() !== undefined) {
        const next = job.nextProvider(admitted);
        if (next) launch(next);
      }
    }
    // The losers: stop waiting for them, and let each settle its row before the workflow ends.
    for (const scope of job.runningCalls.values()) scope.cancel();
    await Promise.all(job.runningAttempts);
  }

  async function admit(): Promise<JobPlan> {
    if (carried) return carried.plan;
    try {
      // An intent too deep (or too large) could not even be handed to admission: serializing it
      // overflows the stack, and a failed workflow task is retried for ever. The patch is asked
      // only for such an intent, so every other history is unchanged.
      const shapeRefusal = input.intent && intentShapeRefusal(input.intent);
      if (shapeRefusal && patched(INTENT_SHAPE_CHECK)) refuse(FAILURES.invalidJob, shapeRefusal);
      // Not cancellable: once it has begun, the rows it writes must be known to this workflow.
      const { firstAttempt, ...plan } = await nonCancellable(() =>
        job.db.admitJob({
          ...input,
          workflowId: workflowInfo().workflowId,
          startFirstAttempt: true,
        }),
      );
      // What admission returned decides, so a history recorded before admission wrote attempt 1
      // (no firstAttempt in its result) replays along its own path, through startAttempt.
      job.firstAttemptWritten(firstAttempt);
      return plan;
    } catch (error) {
      // Tell a waiting admission update why, then fail: this workflow must not run this job.
      const failure = failureOf(error);
      job.admissionFailed({
        type: failure?.type ?? FAILURES.admissionFailed,
        message: failure?.message ?? (error as Error)?.message ?? 'admission failed',
      });
      await condition(allHandlersFinished);
      // A local activity's failure reaches the workflow unwrapped; callers of a Temporal-native
      // start see the same chain either way: the workflow failed, because admitJob failed, with
      // the typed reason as its cause.
      if (error instanceof ApplicationFailure)
        throw new ActivityFailure(
          'admission failed',
          'admitJob',
          undefined,
          // Retryable failures are retried for ever: only a final one ends up here.
          RetryState.NON_RETRYABLE_FAILURE,
          undefined,
          error,
        );
      throw error;
    }
  }

  async function runJob(admitted: JobPlan): Promise<JobWorkflowResult> {
    if (admitted.terminalStatus) {
      job.end({ status: admitted.terminalStatus, completedBy: admitted.completedBy });
      job.show(admitted.terminalStatus, `job already ${admitted.terminalStatus}`);
      // Ended with no workflow to hand its events over (a cancel, a late answer after a
      // terminate): this run does, at once (the sender already running makes it a no-op).
      if (patched(ANNOUNCE_FOUND_ENDING)) await announceEnding(admitted.jobId);
      return { jobId: admitted.jobId, status: admitted.terminalStatus, completedBy: job.winner };
    }
    let resumed: (PlannedRetry & { noted?: true }) | undefined;
    if (!carried && admitted.attempts.length > 0) {
      // A new run of a job whose earlier run ended: go on after the attempts it made, retrying
      // the last as that run would have (at the time it planned, if it noted one).
      job.resumeAfter(admitted.attempts, admitted);
      if (admitted.lastFailure && patched(RESUME_PLANNED_RETRY))
        resumed = resumedRetry(
          admitted,
          job.attempts,
          admitted.lastFailure,
          Math.random,
          Date.now(),
          RETRY_RULES,
        );
    }
    const blocked = job.attempts.find((a) => a.state === 'unknown');
    job.show(
      blocked ? 'unknown' : job.attempts.length > 0 ? 'running' : 'pending',
      carried?.waitingOn ?? 'admitted',
      carried?.needsOperator ?? false,
      // What the last run waited on may quote a provider.
      carried?.waitingOn === undefined ? 'admitted' : markdownText(carried.waitingOn),
    );
    if (admitted.mode === 'exclusive') await runExclusive(admitted, resumed);
    else await runHedged(admitted);

    if (!job.terminal) {
      job.end(
        await nonCancellable(() =>
          job.db.failJob({
            jobId: admitted.jobId,
            failure: exhaustedFailure(admitted, job.failures),
          }),
        ),
      );
    }
    const final: TerminalJobStatus = job.terminal ?? 'failed';
    if (job.status.status !== final)
      job.show(final, final === 'succeeded' ? `done: ${job.winner} won` : `done: ${final}`);
    await announceEnding(admitted.jobId);
    await condition(allHandlersFinished);
    return { jobId: admitted.jobId, status: final, completedBy: job.winner };
  }

  const admitted = await admit();
  job.admit(admitted);
  try {
    return await runJob(admitted);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled through Temporal: an operator's cancel. The job row must end with the workflow.
    return await nonCancellable(async () => {
      for (const scope of job.runningCalls.values()) scope.cancel();
      await Promise.allSettled([...job.runningAttempts]);
      if (!job.terminal)
        job.end(await job.db.cancelJob({ jobId: admitted.jobId, ...TEMPORAL_CANCEL }));
      const final: TerminalJobStatus = job.terminal ?? 'cancelled';
      job.show(
        final,
        final === 'cancelled'
          ? `done: cancelled by ${TEMPORAL_CANCEL.operator} (${TEMPORAL_CANCEL.reason})`
          : `done: ${final} before the cancel arrived`,
      );
      await announceEnding(admitted.jobId);
      await condition(allHandlersFinished);
      if (final === 'cancelled') throw error;
      return { jobId: admitted.jobId, status: final, completedBy: job.winner };
    });
  }
}
