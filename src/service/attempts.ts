import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import { findAttempt, settleAttemptWithoutResult } from '../db/attempts';
import { findJob, findOwnedJob, type JobRecord } from '../db/jobs';
import type { Pool } from '../db/pool';
import { checkOutput, findJobType } from '../jobTypes';
import type { Logger } from '../logger';
import {
  REFUSALS,
  cancelJobUpdate,
  requestAttemptUpdate,
  resolveAttemptUpdate,
  type AttemptSummary,
  type JobWorkflowStatus,
  type ResolveAttemptResult,
} from '../workflows/definitions';
import { ServiceError } from './errors';
import { nudgeWorkflow, recordResult, type AttemptOutcome } from './results';

export interface AttemptServiceDeps {
  pool: Pool;
  temporal: Client;
  logger: Logger;
}

const PROBLEM_BY_REFUSAL: Record<string, string> = {
  [REFUSALS.attemptInFlight]: 'attempt-in-flight',
  [REFUSALS.jobTerminal]: 'job-terminal',
  [REFUSALS.attemptNotResolvable]: 'attempt-not-resolvable',
  [REFUSALS.unknownProvider]: 'incompatible-provider',
  InvalidResult: 'invalid-input',
};

/** Turns a refused or failed workflow update into the rule it broke. */
function asServiceError(error: unknown, job: JobRecord): unknown {
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const cause = error.cause;
    const problem = (cause.type && PROBLEM_BY_REFUSAL[cause.type]) || 'internal';
    const blocking = cause.details?.[0] as AttemptSummary | undefined;
    return new ServiceError(problem, cause.message, blocking ? { blockingAttempt: blocking } : {});
  }
  // The workflow has closed: the job ended.
  const name = (error as Error)?.name;
  if (
    name === 'WorkflowNotFoundError' ||
    /already completed|not found/i.test((error as Error)?.message ?? '')
  ) {
    return new ServiceError('job-terminal', `job ${job.id} has ended`);
  }
  return error;
}

/** A user's "try again / use the fallback": a new attempt, if the job's rules allow one now. */
export async function requestAttempt(
  deps: AttemptServiceDeps,
  ownerId: string,
  jobId: string,
  provider?: string,
): Promise<AttemptSummary | undefined> {
  const job = await findOwnedJob(deps.pool, ownerId, jobId).catch(() => undefined);
  if (!job) return undefined;
  if (job.terminalStatus)
    throw new ServiceError('job-terminal', `job ${job.id} is ${job.terminalStatus}`);
  return updateJobWorkflow(deps, job, requestAttemptUpdate, { provider });
}

/** Sends an update to the job's workflow; a refusal comes back as the rule it broke. */
async function updateJobWorkflow<Ret, Arg>(
  deps: AttemptServiceDeps,
  job: JobRecord,
  update: UpdateDefinition<Ret, [Arg]>,
  arg: Arg,
): Promise<Ret> {
  try {
    return await deps.temporal.workflow
      .getHandle(job.workflowId)
      .executeUpdate(update, { args: [arg] });
  } catch (error) {
    throw asServiceError(error, job);
  }
}

async function jobOfAttempt(deps: AttemptServiceDeps, attemptId: string) {
  const attempt = await findAttempt(deps.pool, attemptId);
  const job = attempt && (await findJob(deps.pool, attempt.jobId));
  return attempt && job ? { attempt, job } : undefined;
}

/** An operator settles an unknown attempt: failed with a reason, or succeeded with a result. */
export async function resolveAttempt(
  deps: AttemptServiceDeps,
  operator: string,
  attemptId: string,
  resolution: { outcome: 'failed' | 'succeeded'; reason: string; result?: unknown },
): Promise<ResolveAttemptResult | undefined> {
  const found = await jobOfAttempt(deps, attemptId);
  if (!found) return undefined;
  if (found.job.terminalStatus && resolution.outcome === 'succeeded') {
    throw new ServiceError('job-terminal', `job ${found.job.id} is ${found.job.terminalStatus}`);
  }
  return updateJobWorkflow(deps, found.job, resolveAttemptUpdate, {
    attemptId,
    operator,
    ...resolution,
  });
}

/** An operator cancels a job. Running calls are abandoned; anything they bring back is discarded. */
export async function cancelJob(
  deps: AttemptServiceDeps,
  operator: string,
  jobId: string,
  reason: string,
): Promise<JobWorkflowStatus | undefined> {
  const job = await findJob(deps.pool, jobId).catch(() => undefined);
  if (!job) return undefined;
  if (job.terminalStatus)
    throw new ServiceError('job-terminal', `job ${job.id} is ${job.terminalStatus}`);
  return updateJobWorkflow(deps, job, cancelJobUpdate, { operator, reason });
}

/**
 * A provider reports the outcome of an attempt after the fact (a webhook). A result goes through
 * the same compare-and-swap as any other; a failure settles the attempt as definitely failed.
 */
export async function acceptProviderCallback(
  deps: AttemptServiceDeps,
  provider: string,
  report:
    | { attemptId: string; status: 'succeeded'; output: unknown }
    | { attemptId: string; status: 'failed'; error: string },
): Promise<AttemptOutcome | undefined> {
  const found = await jobOfAttempt(deps, report.attemptId);
  if (!found || found.attempt.provider !== provider) return undefined;
  const { attempt, job } = found;
  let outcome: AttemptOutcome;
  if (report.status === 'failed') {
    const settled = await settleAttemptWithoutResult(deps.pool, attempt.id, 'failed', {
      code: 'provider_callback',
      message: report.error,
    });
    outcome = {
      attemptId: attempt.id,
      state: settled.state,
      winnerAttemptId: job.completedBy,
      jobStatus: job.terminalStatus,
    };
  } else {
    const contract = findJobType(job.type);
    const checked = contract
      ? checkOutput(contract, job.input, report.output, { attemptId: attempt.id })
      : undefined;
    if (!checked?.ok)
      throw new ServiceError(
        'invalid-input',
        `the reported output breaks the ${job.type} contract: ${checked?.reason ?? 'no contract'}`,
      );
    outcome = await recordResult(deps.pool, deps.logger, {
      attemptId: attempt.id,
      result: checked.output,
      source: `callback:${provider}`,
    });
  }
  await nudgeWorkflow(deps.temporal, deps.logger, job.workflowId, attempt.id);
  return outcome;
}
