import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  condition,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { JobStatus } from '../domain/job';
import type { JobActivities, PlannedProvider } from '../activities';
import {
  AttemptCount,
  JobStatusAttribute,
  statusQuery,
  type AttemptSummary,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type JobWorkflowStatus,
} from './definitions';

// Database activities are idempotent by construction, so they may retry freely.
const db = proxyActivities<JobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** The provider call: exactly one try. A retry is a new, recorded attempt, never this. */
function providerCall(provider: PlannedProvider, seq: number) {
  return proxyActivities<JobActivities>({
    startToCloseTimeout: provider.timeoutMs,
    heartbeatTimeout: Math.min(provider.timeoutMs, 10_000),
    retry: { maximumAttempts: 1 },
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
      const state = cause.type === 'ProviderFailureDefinite' ? 'failed' : 'unknown';
      return { state, error: { ...details, message: cause.message } };
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

export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const status: JobWorkflowStatus = {
    jobId: input.jobId,
    status: 'pending',
    attempts: [],
    waitingOn: 'admission',
  };
  setHandler(statusQuery, () => status);

  const show = (next: JobStatus, waitingOn: string): void => {
    status.status = next;
    status.waitingOn = waitingOn;
    setCurrentDetails(waitingOn);
    upsertSearchAttributes([
      { key: JobStatusAttribute, value: next },
      { key: AttemptCount, value: status.attempts.length },
    ]);
  };

  // The job row must be the one this workflow was started for (owner, key, fingerprint).
  const plan = await db.admitJob({ ...input, workflowId: workflowInfo().workflowId });
  if (plan.terminalStatus) {
    show(plan.terminalStatus, `job already ${plan.terminalStatus}`);
    return { jobId: input.jobId, status: plan.terminalStatus, completedBy: plan.completedBy };
  }

  const failures: Record<string, unknown>[] = [];
  for (const [index, provider] of plan.providers.entries()) {
    const seq = index + 1;
    const attempt = await db.startAttempt({
      jobId: input.jobId,
      seq,
      provider: provider.name,
      exclusive: plan.mode === 'exclusive',
    });
    const summary: AttemptSummary = {
      attemptId: attempt.id,
      seq,
      provider: provider.name,
      state: attempt.state,
    };
    status.attempts.push(summary);
    show('running', `attempt ${seq} on ${provider.name} is running`);

    let output: unknown;
    try {
      output = await providerCall(provider, seq)({ attemptId: attempt.id });
    } catch (error) {
      const outcome = attemptOutcomeOf(error);
      const settled = await db.settleAttempt({
        attemptId: attempt.id,
        state: outcome.state,
        error: outcome.error,
      });
      summary.state = settled.state;
      if (settled.state === 'unknown') {
        // The provider may still be doing the work: no further attempt may start. Reconciling
        // (late result, provider status lookup, operator resolution) settles it.
        show(
          'unknown',
          `blocked: attempt ${seq} on ${provider.name} is unknown since ${new Date().toISOString()}`,
        );
        await condition(() => summary.state !== 'unknown');
        continue;
      }
      failures.push({ attemptId: attempt.id, provider: provider.name, ...outcome.error });
      continue;
    }

    const recorded = await db.recordResult({ attemptId: attempt.id, output });
    summary.state = recorded.outcome === 'won' ? 'succeeded' : 'lost';
    const final = recorded.jobStatus ?? 'succeeded';
    show(
      final,
      recorded.outcome === 'won'
        ? `done: attempt ${seq} won`
        : `done: attempt ${seq} lost a race, result discarded`,
    );
    return {
      jobId: input.jobId,
      status: final,
      completedBy: recorded.outcome === 'won' ? attempt.id : recorded.winnerAttemptId,
    };
  }

  await db.failJob({
    jobId: input.jobId,
    failure: { code: 'all_attempts_failed', attempts: failures },
  });
  show('failed', 'done: every provider in the plan failed');
  return { jobId: input.jobId, status: 'failed', completedBy: null };
}
