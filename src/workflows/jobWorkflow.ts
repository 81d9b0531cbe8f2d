import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  IN_FLIGHT_ATTEMPT_STATES,
  type AttemptState,
  type JobStatus,
  type TerminalJobStatus,
} from '../domain/job';
import type { AttemptOutcome, JobActivities, JobPlan, PlannedProvider } from '../activities';
import {
  AttemptCount,
  JobStatusAttribute,
  REFUSALS,
  attemptSettledSignal,
  cancelJobUpdate,
  requestAttemptUpdate,
  resolveAttemptUpdate,
  statusQuery,
  admissionQuery,
  admitUpdate,
  type AttemptSummary,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type JobWorkflowStatus,
} from './definitions';

// Database activities are idempotent by construction, so they may retry freely.
const db = proxyActivities<JobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: ['InvalidResult'],
  },
});

/** The provider call: exactly one try. A retry is a new, recorded attempt, never this. */
function providerCall(provider: PlannedProvider, seq: number) {
  return proxyActivities<JobActivities>({
    startToCloseTimeout: provider.timeoutMs,
    heartbeatTimeout: provider.heartbeatTimeoutMs,
    retry: { maximumAttempts: 1 },
    // A cancelled call is abandoned at once; if it still answers, its result loses the CAS.
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: `attempt ${seq} on ${provider.name}`,
  }).callProvider;
}

/** Whether a failed provider call certainly had no effect. Anything unclear counts as unknown. */
function attemptOutcomeOf(error: unknown): {
  state: 'failed' | 'unknown';
  error: Record<string, unknown>;
} {
  if (error instanceof ActivityFailure) {
    const cause = error.cause;
    if (cause instanceof TimeoutFailure) {
      return {
        state: 'unknown',
        error: { code: 'timeout', timeoutType: String(cause.timeoutType), message: cause.message },
      };
    }
    if (cause instanceof ApplicationFailure) {
      const details = (cause.details?.[0] ?? {}) as Record<string, unknown>;
      return {
        state: cause.type === 'ProviderFailureDefinite' ? 'failed' : 'unknown',
        error: { ...details, message: cause.message },
      };
    }
    return {
      state: 'unknown',
      error: { code: 'activity_failure', message: cause?.message ?? error.message },
    };
  }
  return {
    state: 'unknown',
    error: { code: 'unexpected', message: (error as Error)?.message ?? String(error) },
  };
}

interface AttemptRequest {
  provider?: string;
  claimed: boolean;
  created?: AttemptSummary;
  refused?: string;
}

function refuse(type: string, message: string, details?: unknown): never {
  throw ApplicationFailure.create({
    type,
    message,
    details: details === undefined ? undefined : [details],
    nonRetryable: true,
  });
}

export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const status: JobWorkflowStatus = {
    jobId: input.jobId ?? '',
    status: 'pending',
    attempts: [],
    waitingOn: 'admission',
  };
  // Set once admitted; handlers that run earlier see it undefined and refuse.
  let plan: JobPlan | undefined = undefined;
  let terminal: TerminalJobStatus | null = null;
  /** Known at start on the HTTP path; on the Temporal-native path, once admission wrote the row. */
  let jobId: string | null = input.jobId ?? null;
  let admissionError: { type: string; message: string } | undefined;
  let winner: string | null = null;
  /** Attempts someone asked the workflow to look at again (late result, callback, operator). */
  const nudged = new Set<string>();
  /** Users' "try again" requests: claimed by the loop, fulfilled when their attempt exists. */
  const requests: AttemptRequest[] = [];
  const pendingRequest = (): AttemptRequest | undefined => requests.find((r) => !r.claimed);
  let nextInPlan = 0;
  const runningCalls = new Map<string, CancellationScope>();

  const inFlight = (): AttemptSummary[] =>
    status.attempts.filter((a) => IN_FLIGHT_ATTEMPT_STATES.includes(a.state));
  const show = (next: JobStatus, waitingOn: string): void => {
    status.status = next;
    status.waitingOn = waitingOn;
    setCurrentDetails(waitingOn);
    upsertSearchAttributes([
      { key: JobStatusAttribute, value: next },
      { key: AttemptCount, value: status.attempts.length },
    ]);
  };
  const apply = (summary: AttemptSummary, outcome: AttemptOutcome): void => {
    summary.state = outcome.state;
    if (outcome.jobStatus) {
      terminal = outcome.jobStatus;
      winner = outcome.winnerAttemptId;
    }
  };

  const admittedJobId = (): string => {
    if (!jobId) refuse(REFUSALS.jobTerminal, 'the job has not been admitted yet');
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
      if (plan && requestFingerprint !== plan.requestFingerprint) {
        refuse(
          REFUSALS.idempotencyKeyReuse,
          'this idempotency key was already used for a different request; the existing job is unchanged',
        );
      }
      return { jobId: admittedJobId() };
    },
    {
      validator: ({ requestFingerprint }) => {
        // Known at start, or once admitted; a child started without one is checked in the handler.
        const known = plan?.requestFingerprint ?? input.requestFingerprint;
        if (known !== undefined && requestFingerprint !== known) {
          refuse(
            REFUSALS.idempotencyKeyReuse,
            'this idempotency key was already used for a different request; the existing job is unchanged',
          );
        }
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
      if (entry.refused) refuse(REFUSALS.unknownProvider, entry.refused);
      if (!entry.created)
        refuse(REFUSALS.jobTerminal, `job ${jobId} ended before the attempt could start`);
      return entry.created;
    },
    {
      validator: (request) => {
        if (terminal) refuse(REFUSALS.jobTerminal, `job ${jobId} is ${terminal}`);
        const blocking = plan?.mode === 'hedged' ? undefined : inFlight()[0];
        if (!plan || blocking || requests.length > 0) {
          refuse(
            REFUSALS.attemptInFlight,
            blocking
              ? `attempt ${blocking.seq} on ${blocking.provider} is ${blocking.state}`
              : 'an attempt is about to start',
            blocking,
          );
        }
        if (
          request.provider !== undefined &&
          !plan.compatible.some((p) => p.name === request.provider)
        ) {
          refuse(REFUSALS.unknownProvider, `provider ${request.provider} cannot run this job`);
        }
      },
    },
  );

  setHandler(
    resolveAttemptUpdate,
    async (resolution) => {
      const summary = status.attempts.find((a) => a.attemptId === resolution.attemptId)!;
      let outcome: AttemptOutcome;
      try {
        outcome = await db.resolveAttempt(resolution);
      } catch (error) {
        const cause = error instanceof ActivityFailure ? error.cause : error;
        refuse(
          cause instanceof ApplicationFailure && cause.type ? cause.type : 'ResolveFailed',
          (cause as Error)?.message ?? 'resolution failed',
        );
      }
      apply(summary, outcome);
      nudged.add(resolution.attemptId);
      return { attemptId: resolution.attemptId, state: summary.state };
    },
    {
      validator: (resolution) => {
        const summary = status.attempts.find((a) => a.attemptId === resolution.attemptId);
        if (!summary || summary.state !== 'unknown') {
          refuse(
            REFUSALS.attemptNotResolvable,
            `attempt ${resolution.attemptId} is ${summary?.state ?? 'not an attempt of this job'}; only an unknown attempt can be resolved`,
          );
        }
        if (resolution.outcome === 'succeeded' && resolution.result === undefined) {
          refuse(REFUSALS.attemptNotResolvable, 'resolving as succeeded needs the result');
        }
      },
    },
  );

  setHandler(
    cancelJobUpdate,
    async (cancellation) => {
      const final = await db.cancelJob({ jobId: admittedJobId(), ...cancellation });
      terminal = final ?? 'cancelled';
      // Stop waiting for running calls; whatever they still bring back loses the CAS.
      for (const scope of runningCalls.values()) scope.cancel();
      show(terminal, `done: ${terminal} by ${cancellation.operator} (${cancellation.reason})`);
      return status;
    },
    {
      validator: (_cancellation) => {
        if (terminal) refuse(REFUSALS.jobTerminal, `job ${jobId} is ${terminal}`);
      },
    },
  );

  // The job row must be the one this workflow was started for (owner, key, fingerprint).
  try {
    plan = await db.admitJob({ ...input, workflowId: workflowInfo().workflowId });
  } catch (error) {
    // Tell a waiting admission update why, then fail: this workflow must not run this job.
    const cause = error instanceof ActivityFailure ? error.cause : error;
    admissionError = {
      type: cause instanceof ApplicationFailure && cause.type ? cause.type : 'AdmissionFailed',
      message: (cause as Error)?.message ?? 'admission failed',
    };
    await condition(allHandlersFinished);
    throw error;
  }
  jobId = plan.jobId;
  status.jobId = plan.jobId;
  const admitted: JobPlan = plan;
  if (admitted.terminalStatus) {
    terminal = admitted.terminalStatus;
    show(terminal, `job already ${terminal}`);
    return { jobId: admitted.jobId, status: terminal, completedBy: admitted.completedBy };
  }

  const failures: Record<string, unknown>[] = [];
  /**
   * The provider of the next attempt: a user's request first (claimed here, so it is served
   * once), else the plan's next.
   */
  const nextProvider = (): { provider: PlannedProvider; request?: AttemptRequest } | undefined => {
    const request = pendingRequest();
    if (!request) {
      const provider = admitted.providers[nextInPlan++];
      return provider && { provider };
    }
    request.claimed = true;
    const provider =
      request.provider === undefined
        ? admitted.providers[nextInPlan++]
        : admitted.compatible.find((p) => p.name === request.provider);
    if (provider) return { provider, request };
    request.refused = 'no provider is left to try';
    return undefined;
  };

  /** Waits, with backoff, until an unknown attempt settles (late result, status lookup, operator). */
  async function reconcile(summary: AttemptSummary): Promise<void> {
    const since = new Date().toISOString();
    let delayMs = 1_000;
    while (summary.state === 'unknown' && !terminal) {
      show(
        'unknown',
        `blocked: attempt ${summary.seq} on ${summary.provider} is unknown since ${since}`,
      );
      apply(summary, await db.reconcileAttempt({ attemptId: summary.attemptId }));
      if (summary.state !== 'unknown' || terminal) return;
      await condition(() => nudged.has(summary.attemptId) || terminal !== null, delayMs, {
        summary: `reconcile attempt ${summary.seq} on ${summary.provider}`,
      });
      nudged.delete(summary.attemptId);
      delayMs = Math.min(delayMs * 2, 60_000);
    }
  }

  /** One attempt: its row, its single provider call, and its settlement. */
  async function runAttempt(
    provider: PlannedProvider,
    waitWhileUnknown: boolean,
    request?: AttemptRequest,
  ): Promise<AttemptState> {
    const seq = status.attempts.length + 1;
    const created = await db.startAttempt({
      jobId: admitted.jobId,
      seq,
      provider: provider.name,
      exclusive: admitted.mode === 'exclusive',
    });
    const summary: AttemptSummary = {
      attemptId: created.id,
      seq,
      provider: provider.name,
      state: created.state,
    };
    status.attempts.push(summary);
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
      // Cancelled by us: the call may still be running at the provider, so its outcome is unknown.
      const settled = isCancellation(error)
        ? {
            state: 'unknown' as const,
            error: { code: 'abandoned', message: 'the workflow stopped waiting for this call' },
          }
        : attemptOutcomeOf(error);
      if (settled.state === 'failed')
        failures.push({ attemptId: summary.attemptId, provider: provider.name, ...settled.error });
      apply(summary, await db.settleAttempt({ attemptId: summary.attemptId, ...settled }));
    } finally {
      runningCalls.delete(summary.attemptId);
    }
    if (summary.state === 'unknown' && waitWhileUnknown) await reconcile(summary);
    return summary.state;
  }

  if (admitted.mode === 'exclusive') {
    // One attempt at a time; an unknown one blocks everything after it until it settles.
    while (!terminal) {
      const next = nextProvider();
      if (!next) break;
      await runAttempt(next.provider, true, next.request);
    }
  } else {
    // Hedged: after a delay of silence the next provider starts too; the first CAS wins.
    const live = new Set<Promise<AttemptState>>();
    let settledCount = 0;
    const launch = (next: { provider: PlannedProvider; request?: AttemptRequest }): void => {
      const running = runAttempt(next.provider, false, next.request);
      live.add(running);
      void running.then(() => {
        live.delete(running);
        settledCount += 1;
      });
    };
    while (!terminal) {
      const nextExists = nextInPlan < admitted.providers.length || pendingRequest() !== undefined;
      if (live.size === 0) {
        const next = nextExists ? nextProvider() : undefined;
        if (next) {
          launch(next);
          continue;
        }
        // Nothing running and nobody left to ask: wait out the unknown ones, or fail.
        const unknown = status.attempts.find((a) => a.state === 'unknown');
        if (!unknown) break;
        await reconcile(unknown);
        continue;
      }
      const before = settledCount;
      const woken = () =>
        terminal !== null || settledCount !== before || pendingRequest() !== undefined;
      let timedOut = false;
      if (nextExists) {
        timedOut = !(await condition(woken, admitted.hedgeDelayMs, {
          summary: `hedge delay ${admitted.hedgeDelayMs} ms`,
        }));
      } else {
        await condition(woken);
      }
      if (terminal) break;
      const failedOrUnknown = settledCount !== before;
      if (timedOut || failedOrUnknown || pendingRequest() !== undefined) {
        const next = nextProvider();
        if (next) launch(next);
      }
    }
    // The losers: stop waiting for them, and let each settle its row before the workflow ends.
    for (const scope of runningCalls.values()) scope.cancel();
    await Promise.all(live);
  }

  if (!terminal) {
    terminal =
      (await db.failJob({
        jobId: admitted.jobId,
        failure:
          admitted.skipped.length > 0
            ? // Providers were left that could have run, but none certified for this contract.
              {
                code: 'no-certified-provider',
                type: '/problems/no-certified-provider',
                attempts: failures,
                skipped: admitted.skipped,
              }
            : { code: 'all_attempts_failed', attempts: failures },
      })) ?? 'failed';
  }
  const final: TerminalJobStatus = terminal;
  show(final, final === 'succeeded' ? `done: ${winner} won` : `done: ${final}`);
  return { jobId: admitted.jobId, status: final, completedBy: winner };
}
