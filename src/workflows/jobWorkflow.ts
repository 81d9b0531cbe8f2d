import {
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  makeContinueAsNewFunc,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { KEY_REUSE_MESSAGE } from '../domain/failures';
import {
  IN_FLIGHT_ATTEMPT_STATES,
  type AttemptState,
  type JobStatus,
  type TerminalJobStatus,
} from '../domain/job';
import { db, providerCall, settle } from './activityStubs';
import {
  AttemptCount,
  FAILURES,
  JobStatusAttribute,
  admissionQuery,
  admitUpdate,
  attemptSettledSignal,
  cancelJobUpdate,
  requestAttemptUpdate,
  resolveAttemptUpdate,
  statusQuery,
  type AttemptOutcome,
  type AttemptSummary,
  type CarriedJobState,
  type JobEnding,
  type JobPlan,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type JobWorkflowStatus,
  type PlannedProvider,
  type ReconcileOutcome,
} from './definitions';
import {
  anotherAttemptPossible,
  attemptRequestRefusal,
  blockedDescription,
  chooseNextAttempt,
  exhaustedFailure,
  firstReconcileDelayMs,
  nextReconcileDelayMs,
  reconcileWaitMs,
  resolutionRefusal,
  resumePosition,
  settledMeanwhileRefusal,
  shouldContinueAsNew,
} from './policy';
import { TEMPORAL_CANCEL, abandonment, failureOf, refuse, refuseIf } from './refusals';

interface AttemptRequest {
  provider?: string;
  claimed: boolean;
  created?: AttemptSummary;
  refused?: { type: string; message: string };
}

export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const carried = input.carried;
  const status: JobWorkflowStatus = {
    jobId: carried?.plan.jobId ?? input.jobId ?? '',
    status: 'pending',
    attempts: carried?.attempts ?? [],
    waitingOn: 'admission',
    needsOperator: false,
    run: (carried?.runs ?? 0) + 1,
  };
  const attempts = status.attempts;
  // Set once admitted (or carried); handlers that run earlier see it undefined and refuse.
  let plan: JobPlan | undefined = carried?.plan;
  let terminal: TerminalJobStatus | null = null;
  let winner: string | null = null;
  let jobId: string | null = carried?.plan.jobId ?? input.jobId ?? null;
  let admissionError: { type: string; message: string } | undefined;
  /** Attempts someone asked the workflow to look at again (late result, callback, operator). */
  const nudged = new Set<string>(carried?.nudged ?? []);
  /** Users' "try again" requests: claimed by the loop, fulfilled when their attempt exists. */
  const requests: AttemptRequest[] = [];
  const pendingRequest = (): AttemptRequest | undefined => requests.find((r) => !r.claimed);
  let nextInPlan = carried?.nextInPlan ?? 0;
  const failures: Array<Record<string, unknown>> = carried?.failures ?? [];
  const unknownSince: Record<string, string> = carried?.unknownSince ?? {};
  const runningCalls = new Map<string, CancellationScope>();
  /** Every attempt being run right now, so that a cancel can wait for each to settle its row. */
  const runningAttempts = new Set<Promise<unknown>>();

  let shown: { status: JobStatus; count: number } | undefined;
  const show = (next: JobStatus, waitingOn: string, needsOperator = false): void => {
    status.status = next;
    status.waitingOn = waitingOn;
    status.needsOperator = needsOperator;
    setCurrentDetails(needsOperator ? `${waitingOn} — needs an operator` : waitingOn);
    // Search attributes only when they change: every upsert is a history event.
    if (shown?.status === next && shown.count === attempts.length) return;
    shown = { status: next, count: attempts.length };
    upsertSearchAttributes([
      { key: JobStatusAttribute, value: next },
      { key: AttemptCount, value: attempts.length },
    ]);
  };
  const end = (
    ending: JobEnding | { status: TerminalJobStatus | null; completedBy: string | null },
  ) => {
    if (!ending.status || terminal) return;
    terminal = ending.status;
    winner = ending.completedBy;
  };
  const apply = (summary: AttemptSummary, outcome: AttemptOutcome): void => {
    if (outcome.state === 'failed' && summary.state !== 'failed')
      failures.push({ attemptId: summary.attemptId, provider: summary.provider, ...outcome.error });
    summary.state = outcome.state;
    end({ status: outcome.jobStatus, completedBy: outcome.winnerAttemptId });
  };
  const admittedJobId = (): string => {
    if (!jobId) refuse(FAILURES.jobTerminal, 'the job has not been admitted yet');
    return jobId;
  };

  setHandler(statusQuery, () => status);
  setHandler(admissionQuery, () => ({
    jobId,
    requestFingerprint: plan?.requestFingerprint ?? input.requestFingerprint ?? null,
  }));
  setHandler(
    admitUpdate,
    async ({ requestFingerprint }) => {
      await condition(() => (jobId !== null && plan !== undefined) || admissionError !== undefined);
      if (admissionError) refuse(admissionError.type, admissionError.message);
      if (plan && requestFingerprint !== plan.requestFingerprint)
        refuse(FAILURES.idempotencyKeyReuse, KEY_REUSE_MESSAGE);
      return { jobId: admittedJobId() };
    },
    {
      validator: ({ requestFingerprint }) => {
        // Known at start, or once admitted; a child started without one is checked in the handler.
        const known = plan?.requestFingerprint ?? input.requestFingerprint;
        if (known !== undefined && requestFingerprint !== known)
          refuse(FAILURES.idempotencyKeyReuse, KEY_REUSE_MESSAGE);
      },
    },
  );
  setHandler(attemptSettledSignal, ({ attemptId }) => void nudged.add(attemptId));

  setHandler(
    requestAttemptUpdate,
    async (request) => {
      const entry: AttemptRequest = { provider: request.provider, claimed: false };
      requests.push(entry);
      await condition(
        () => entry.created !== undefined || entry.refused !== undefined || terminal !== null,
      );
      if (requests.includes(entry)) requests.splice(requests.indexOf(entry), 1);
      if (entry.refused) refuse(entry.refused.type, entry.refused.message);
      if (!entry.created)
        refuse(FAILURES.jobTerminal, `job ${jobId} ended before the attempt could start`);
      return entry.created;
    },
    {
      validator: (request) =>
        refuseIf(
          attemptRequestRefusal(
            {
              jobId,
              plan,
              terminal,
              attempts,
              requestWaiting: requests.some((r) => !r.created && !r.refused),
            },
            request,
          ),
        ),
    },
  );

  setHandler(
    resolveAttemptUpdate,
    async (resolution) => {
      const summary = attempts.find((a) => a.attemptId === resolution.attemptId)!;
      // The database may already say `unknown` while this workflow still waits for the call's
      // end: wait for it, then decide on what the attempt really is.
      await condition(() => summary.state !== 'starting' && summary.state !== 'running');
      refuseIf(settledMeanwhileRefusal(summary));
      let outcome: AttemptOutcome;
      try {
        outcome = await db.resolveAttempt(resolution);
      } catch (error) {
        const failure = failureOf(error);
        refuse(failure?.type ?? 'ResolveFailed', failure?.message ?? 'resolution failed');
      }
      apply(summary, outcome);
      nudged.add(resolution.attemptId);
      return { attemptId: resolution.attemptId, state: summary.state };
    },
    {
      validator: (resolution) => refuseIf(resolutionRefusal(attempts, resolution)),
    },
  );

  setHandler(
    cancelJobUpdate,
    async (cancellation) => {
      end(await settle(() => db.cancelJob({ jobId: admittedJobId(), ...cancellation })));
      // Stop waiting for running calls; whatever they still bring back loses the CAS.
      for (const scope of runningCalls.values()) scope.cancel();
      if (terminal !== 'cancelled')
        // Settled behind this workflow's back (a late result, a callback): that outcome stands.
        refuse(
          FAILURES.jobTerminal,
          `job ${jobId} is ${terminal ?? 'ended'}; it was not cancelled`,
        );
      show('cancelled', `done: cancelled by ${cancellation.operator} (${cancellation.reason})`);
      return status;
    },
    {
      validator: (_cancellation) => {
        if (terminal) refuse(FAILURES.jobTerminal, `job ${jobId} is ${terminal}`);
        if (!plan) refuse(FAILURES.jobTerminal, 'the job has not been admitted yet');
      },
    },
  );

  /** The next provider: a user's request first (claimed here, so it is served once), else the plan's. */
  const nextProvider = (
    admitted: JobPlan,
  ): { provider: PlannedProvider; request?: AttemptRequest } | undefined => {
    const request = pendingRequest();
    const next = chooseNextAttempt(admitted, attempts.length, nextInPlan, request);
    nextInPlan = next.nextInPlan;
    if (request) {
      request.claimed = true;
      if (next.refusal)
        request.refused = { type: next.refusal.type, message: next.refusal.message };
    }
    return next.provider && { provider: next.provider, ...(request ? { request } : {}) };
  };

  /** The state to hand to the next run. */
  const snapshot = (admitted: JobPlan): CarriedJobState => ({
    plan: admitted,
    attempts,
    nextInPlan,
    failures,
    nudged: [...nudged].filter((id) =>
      attempts.some((a) => a.attemptId === id && IN_FLIGHT_ATTEMPT_STATES.includes(a.state)),
    ),
    unknownSince,
    runs: status.run,
    waitingOn: status.waitingOn,
    needsOperator: status.needsOperator,
  });

  /**
   * Continues-as-new when the history has grown large: a job may wait in `unknown` for months.
   * Called only while nothing runs (no provider call in flight) and no request waits for the
   * loop, after every handler has finished, so the next run starts from a complete state.
   */
  async function continueAsNewIfLarge(admitted: JobPlan): Promise<void> {
    const info = workflowInfo();
    if (!shouldContinueAsNew(info, admitted)) return;
    await condition(allHandlersFinished);
    if (terminal || pendingRequest()) return;
    const next = makeContinueAsNewFunc<typeof jobWorkflow>({
      typedSearchAttributes: info.typedSearchAttributes,
    });
    await next({ ...input, carried: snapshot(admitted) });
  }

  /** Waits, with backoff, until an unknown attempt settles (late result, status lookup, operator). */
  async function reconcile(admitted: JobPlan, summary: AttemptSummary): Promise<void> {
    unknownSince[summary.attemptId] ??= new Date().toISOString();
    let delayMs = firstReconcileDelayMs(admitted);
    while (summary.state === 'unknown' && !terminal) {
      const found: ReconcileOutcome = await db.reconcileAttempt({ attemptId: summary.attemptId });
      nudged.delete(summary.attemptId);
      apply(summary, found);
      if (summary.state !== 'unknown' || terminal) return;
      show(
        'unknown',
        blockedDescription(summary, unknownSince[summary.attemptId]!, found.detail),
        found.needsOperator === true,
      );
      // Hedged jobs serve a user's request at once, even while one attempt is unknown.
      const requested = (): boolean => admitted.mode === 'hedged' && pendingRequest() !== undefined;
      if (requested()) return;
      await continueAsNewIfLarge(admitted);
      await condition(
        () => nudged.has(summary.attemptId) || terminal !== null || requested(),
        reconcileWaitMs(delayMs, found.recheckInMs),
        { summary: `reconcile attempt ${summary.seq} on ${summary.provider}` },
      );
      delayMs = nextReconcileDelayMs(delayMs, admitted);
    }
  }

  /** One attempt: its row, its single provider call, and what the call came to. */
  async function runAttempt(
    admitted: JobPlan,
    provider: PlannedProvider,
    request?: AttemptRequest,
  ): Promise<void> {
    const seq = attempts.length + 1;
    let created: { id: string; state: AttemptState };
    try {
      created = await db.startAttempt({
        jobId: admitted.jobId,
        seq,
        provider: provider.name,
        exclusive: admitted.mode === 'exclusive',
      });
    } catch (error) {
      const failure = failureOf(error);
      if (failure?.type === FAILURES.jobNotOpen) {
        // The job was settled meanwhile (a cancel, a winner this workflow had not heard of).
        const details = failure.details?.[0] as
          { terminalStatus: TerminalJobStatus | null; completedBy: string | null } | undefined;
        end({ status: details?.terminalStatus ?? null, completedBy: details?.completedBy ?? null });
        if (request) request.refused = { type: FAILURES.jobTerminal, message: failure.message };
        return;
      }
      throw error;
    }
    const summary: AttemptSummary = {
      attemptId: created.id,
      seq,
      provider: provider.name,
      state: created.state,
    };
    attempts.push(summary);
    if (request) {
      request.created = summary;
      requests.splice(requests.indexOf(request), 1);
    }
    show('running', `attempt ${seq} on ${provider.name} is running`);

    const scope = new CancellationScope();
    runningCalls.set(summary.attemptId, scope);
    try {
      apply(
        summary,
        await scope.run(() => providerCall(provider, seq)({ attemptId: summary.attemptId })),
      );
    } catch (error) {
      // Timed out, cancelled, or the worker died: the call may still be running at the provider.
      const abandoned = abandonment(error);
      apply(
        summary,
        await settle(() => db.abandonAttempt({ attemptId: summary.attemptId, error: abandoned })),
      );
    } finally {
      runningCalls.delete(summary.attemptId);
    }
  }

  const track = (running: Promise<void>): Promise<void> => {
    runningAttempts.add(running);
    // Bookkeeping only: whoever awaits `running` sees its failure (an unhandled one would fail the task).
    running.then(
      () => runningAttempts.delete(running),
      () => runningAttempts.delete(running),
    );
    return running;
  };

  /** Looks at attempts someone nudged about (a callback, a late answer) while calls still run. */
  async function lookAtNudged(): Promise<void> {
    for (const attemptId of [...nudged]) {
      nudged.delete(attemptId);
      const summary = attempts.find((a) => a.attemptId === attemptId);
      if (!summary || !IN_FLIGHT_ATTEMPT_STATES.includes(summary.state)) continue;
      const found = await db.reconcileAttempt({ attemptId });
      // Only what the database settled: a call still running reports when it ends.
      if (found.state !== 'running') apply(summary, found);
    }
  }

  async function runExclusive(admitted: JobPlan): Promise<void> {
    // One attempt at a time; an unknown one blocks everything after it until it settles.
    while (!terminal) {
      const blocked = attempts.find((a) => a.state === 'unknown');
      if (blocked) {
        await reconcile(admitted, blocked);
        continue;
      }
      const next = nextProvider(admitted);
      if (!next) break;
      await track(runAttempt(admitted, next.provider, next.request));
    }
  }

  async function runHedged(admitted: JobPlan): Promise<void> {
    // After a delay of silence the next provider starts too; the first CAS wins.
    let settledCount = 0;
    // A launched attempt that failed in a way no retry heals: the loop rethrows it.
    let broken: unknown;
    const launch = (next: { provider: PlannedProvider; request?: AttemptRequest }): void => {
      track(runAttempt(admitted, next.provider, next.request)).then(
        () => void (settledCount += 1),
        (error: unknown) => {
          broken ??= error;
          settledCount += 1;
        },
      );
    };
    while (!terminal) {
      if (broken) throw broken;
      const nextExists = anotherAttemptPossible(
        admitted,
        attempts.length,
        nextInPlan,
        pendingRequest() !== undefined,
      );
      if (runningAttempts.size === 0) {
        const next = nextExists || pendingRequest() ? nextProvider(admitted) : undefined;
        if (next) {
          launch(next);
          continue;
        }
        if (pendingRequest()) continue;
        // Nothing running and nobody left to ask: wait out the unknown ones, or fail.
        const unknown = attempts.find((a) => a.state === 'unknown');
        if (!unknown) break;
        await reconcile(admitted, unknown);
        continue;
      }
      const before = settledCount;
      const woken = (): boolean =>
        terminal !== null ||
        settledCount !== before ||
        pendingRequest() !== undefined ||
        nudged.size > 0;
      const timedOut = nextExists
        ? !(await condition(woken, admitted.hedgeDelayMs, {
            summary: `hedge delay ${admitted.hedgeDelayMs} ms`,
          }))
        : (await condition(woken), false);
      if (nudged.size > 0) await lookAtNudged();
      if (terminal) break;
      if (timedOut || settledCount !== before || pendingRequest() !== undefined) {
        const next = nextProvider(admitted);
        if (next) launch(next);
      }
    }
    // The losers: stop waiting for them, and let each settle its row before the workflow ends.
    for (const scope of runningCalls.values()) scope.cancel();
    await Promise.all(runningAttempts);
  }

  async function admit(): Promise<JobPlan> {
    if (carried) return carried.plan;
    try {
      // Not cancellable: once it has begun, the row it writes must be known to this workflow.
      return await settle(() => db.admitJob({ ...input, workflowId: workflowInfo().workflowId }));
    } catch (error) {
      // Tell a waiting admission update why, then fail: this workflow must not run this job.
      const failure = failureOf(error);
      admissionError = {
        type: failure?.type ?? 'AdmissionFailed',
        message: failure?.message ?? (error as Error)?.message ?? 'admission failed',
      };
      await condition(allHandlersFinished);
      throw error;
    }
  }

  async function run(admitted: JobPlan): Promise<JobWorkflowResult> {
    if (admitted.terminalStatus) {
      end({ status: admitted.terminalStatus, completedBy: admitted.completedBy });
      show(admitted.terminalStatus, `job already ${admitted.terminalStatus}`);
      return { jobId: admitted.jobId, status: admitted.terminalStatus, completedBy: winner };
    }
    if (!carried && admitted.attempts.length > 0) {
      // A new run of a job whose earlier run ended: go on after the attempts it made.
      attempts.push(...admitted.attempts);
      nextInPlan = resumePosition(admitted.providers, attempts);
    }
    const blocked = attempts.find((a) => a.state === 'unknown');
    show(
      blocked ? 'unknown' : attempts.length > 0 ? 'running' : 'pending',
      carried?.waitingOn ?? 'admitted',
      carried?.needsOperator ?? false,
    );
    if (admitted.mode === 'exclusive') await runExclusive(admitted);
    else await runHedged(admitted);

    if (!terminal) {
      end(
        await settle(() =>
          db.failJob({ jobId: admitted.jobId, failure: exhaustedFailure(admitted, failures) }),
        ),
      );
    }
    const final: TerminalJobStatus = terminal ?? 'failed';
    if (status.status !== final)
      show(final, final === 'succeeded' ? `done: ${winner} won` : `done: ${final}`);
    await condition(allHandlersFinished);
    return { jobId: admitted.jobId, status: final, completedBy: winner };
  }

  const admitted = await admit();
  plan = admitted;
  jobId = admitted.jobId;
  status.jobId = admitted.jobId;
  try {
    return await run(admitted);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled through Temporal: an operator's cancel. The job row must end with the workflow.
    return await settle(async () => {
      for (const scope of runningCalls.values()) scope.cancel();
      await Promise.allSettled([...runningAttempts]);
      if (!terminal) end(await db.cancelJob({ jobId: admitted.jobId, ...TEMPORAL_CANCEL }));
      const final: TerminalJobStatus = terminal ?? 'cancelled';
      show(
        final,
        final === 'cancelled'
          ? `done: cancelled by ${TEMPORAL_CANCEL.operator} (${TEMPORAL_CANCEL.reason})`
          : `done: ${final} before the cancel arrived`,
      );
      await condition(allHandlersFinished);
      if (final === 'cancelled') throw error;
      return { jobId: admitted.jobId, status: final, completedBy: winner };
    });
  }
}
