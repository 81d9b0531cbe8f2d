import type { Client } from '@temporalio/client';
import { admissionHoldOf } from '../db/admissionHolds';
import { operatorsFailure, reportAttemptFailure } from '../db/attemptFailureReports';
import { findAttempt, listAttempts, type AttemptRecord } from '../db/attempts';
import { findJob, findOwnedJob, type JobRecord } from '../db/jobs';
import type { Pool } from '../db/pool';
import { isUuid } from '../domain/identity';
import { isOpenRunStatus } from '../domain/runStatus';
import type { WebhookRetry } from '../domain/webhooks';
import { checkJobResult } from '../jobTypes';
import type { Logger } from '../logger';
import type { JobEndMetrics } from '../telemetry/histograms';
import {
  cancelJobUpdate,
  cancellationRecord,
  requestAttemptUpdate,
  resolutionResult,
  resolveAttemptUpdate,
  type AttemptSummary,
  type CancelJobInput,
  type JobWorkflowStatus,
  type ResolveAttemptResult,
} from '../workflows/definitions';
import {
  blockingAttemptMessage,
  endedJobMessage,
  NOT_ADMITTED,
  notCancelledMessage,
} from '../workflows/policy';
import { ServiceError } from './errors';
import { updateJobWorkflow, WorkflowClosedError } from './jobUpdates';
import { attemptSummary, endJobWithoutResult, recordResult } from './results';
import { startEventSenders, type SenderStartDeps } from './webhookSenders';

export interface AttemptServiceDeps {
  pool: Pool;
  temporal: Client;
  logger: Logger;
  /** The job task queue: where the senders of a job's webhooks run when it has no workflow. */
  taskQueue: string;
  /** How those senders retry. */
  webhookRetry: WebhookRetry;
  /** Where a job this process ends (a cancel, a callback's result) is observed. */
  metrics?: JobEndMetrics | undefined;
}

/** What starting a job's webhook senders takes, from these deps. */
export function senderDeps(deps: AttemptServiceDeps): SenderStartDeps {
  return { ...deps, retry: deps.webhookRetry };
}

/** A user's "try again / use the fallback": a new attempt, if the job's rules allow one now. */
export async function requestAttempt(
  deps: AttemptServiceDeps,
  ownerId: string,
  jobId: string,
  provider?: string,
): Promise<AttemptSummary | undefined> {
  if (!isUuid(jobId)) return undefined;
  const job = await findOwnedJob(deps.pool, ownerId, jobId);
  if (!job) return undefined;
  if (job.terminalStatus)
    throw new ServiceError('job-terminal', endedJobMessage(job.id, job.terminalStatus));
  try {
    return await updateJobWorkflow(deps, job, requestAttemptUpdate, { provider });
  } catch (error) {
    if (error instanceof WorkflowClosedError) throw await closedOrRestarting(deps, job);
    throw await withRecordedBlockingState(deps, error);
  }
}

/** How long an answer waits for a run that is closing (cancelled through Temporal) to end its job. */
const CLOSING_RUN_PATIENCE_MS = 10_000;

/**
 * The job's workflow took no update: the job has ended (the answer says how); its run is
 * closing (cancelled through Temporal while it held the update, it writes the ending before it
 * closes: the answer waits for it); or its run was terminated while the job is open, and the
 * sweeper will start a new one: nothing was done, and the same request a little later reaches it.
 */
async function closedOrRestarting(
  deps: Pick<AttemptServiceDeps, 'pool' | 'temporal'>,
  job: JobRecord,
): Promise<ServiceError> {
  const giveUpAt = Date.now() + CLOSING_RUN_PATIENCE_MS;
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    const now = await findJob(deps.pool, job.id);
    if (now?.terminalStatus) return new WorkflowClosedError(now);
    const run = await deps.temporal.workflow
      .getHandle(job.workflowId)
      .describe()
      .catch(() => undefined);
    if (!run || !isOpenRunStatus(run.status.name) || Date.now() + pause > giveUpAt) break;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  // The run may have written the ending as it closed, after the last read.
  const last = await findJob(deps.pool, job.id);
  if (last?.terminalStatus) return new WorkflowClosedError(last);
  return new ServiceError(
    'service-unavailable',
    `the workflow of job ${job.id} is not running (its run was terminated or reset); a new run takes the job up: nothing was done, send the request again`,
    { jobId: job.id },
  );
}

/**
 * A refusal names the attempt that blocks as the workflow last saw it; its row may be newer (the
 * row turns `unknown` before the workflow hears of it), and the answer agrees with what a read of
 * the job shows, so the refusal's state, and the wait it advises, are the row's.
 */
async function withRecordedBlockingState(
  deps: Pick<AttemptServiceDeps, 'pool'>,
  error: unknown,
): Promise<unknown> {
  if (!(error instanceof ServiceError) || error.problemType !== 'attempt-in-flight') return error;
  const blocking = error.details.blockingAttempt as AttemptSummary | undefined;
  if (!blocking?.attemptId) return error;
  const row = await findAttempt(deps.pool, blocking.attemptId);
  if (!row || row.state === blocking.state) return error;
  return new ServiceError(
    error.problemType,
    blockingAttemptMessage({ ...blocking, state: row.state }),
    {
      ...error.details,
      blockingAttempt: { ...blocking, state: row.state },
    },
  );
}

/** An attempt and its job, if both exist. */
export async function jobOfAttempt(deps: AttemptServiceDeps, attemptId: string) {
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
  try {
    return await updateJobWorkflow(deps, found.job, resolveAttemptUpdate, {
      attemptId,
      operator,
      ...resolution,
    });
  } catch (error) {
    if (!(error instanceof WorkflowClosedError)) throw error;
  }
  return resolveAfterWorkflowClosed(deps, operator, found, resolution);
}

/**
 * The job ended (cancelled, say) while one of its attempts was `unknown`, and its workflow has
 * closed: nothing will look that attempt up any more, so the operator's word is the only way it
 * settles. `failed` says the provider never did the work; `succeeded` records that it did, and
 * goes through the compare-and-swap like any result, where it loses to the job's ending and is
 * kept as a race: the record then shows that the work happened under an ended job.
 */
async function resolveAfterWorkflowClosed(
  deps: AttemptServiceDeps,
  operator: string,
  found: { attempt: AttemptRecord; job: JobRecord },
  resolution: { outcome: 'failed' | 'succeeded'; reason: string; result?: unknown },
): Promise<ResolveAttemptResult> {
  // Read again: the workflow may have settled the attempt before it closed.
  const attempt = (await findAttempt(deps.pool, found.attempt.id)) ?? found.attempt;
  const { job } = found;
  // Settled already, and its job has ended: nothing is left to resolve.
  if (attempt.state !== 'unknown') throw new WorkflowClosedError(job);
  deps.logger.info(
    {
      jobId: job.id,
      attemptId: attempt.id,
      operator,
      outcome: resolution.outcome,
      reason: resolution.reason,
    },
    'operator resolves an attempt of an ended job',
  );
  if (resolution.outcome === 'failed') {
    const settled = await reportAttemptFailure(
      deps.pool,
      attempt.id,
      operatorsFailure(operator, resolution.reason),
    );
    return resolutionResult(settled.id, settled.state, 'failed');
  }
  const checked = checkJobResult(job, resolution.result, attempt.id);
  if (!checked.ok)
    throw new ServiceError(
      'invalid-input',
      `the result does not satisfy the ${job.type} contract: ${checked.reason}`,
    );
  const outcome = await recordResult(deps, {
    attemptId: attempt.id,
    result: checked.output,
    source: `operator:${operator}`,
  });
  // Its loss to the job's ending is news for the owner (job.late_result): no workflow sends it.
  await startEventSenders(senderDeps(deps), job.id);
  return resolutionResult(outcome.attemptId, outcome.state, 'succeeded');
}

/**
 * Cancels a job: an operator any job, its owner only its own (another's is not found). A running
 * side-effect attempt is abandoned (unknown, reconciled as ever); a winner already recorded
 * stands, and the refusal says which status the job ended in and by which attempt.
 */
export async function cancelJob(
  deps: AttemptServiceDeps,
  jobId: string,
  cancel: CancelJobInput,
): Promise<JobWorkflowStatus | undefined> {
  if (!isUuid(jobId)) return undefined;
  const job =
    cancel.owner !== undefined
      ? await findOwnedJob(deps.pool, cancel.owner, jobId)
      : await findJob(deps.pool, jobId);
  if (!job) return undefined;
  if (job.terminalStatus) throw endedAlready(job);
  // A job an admission hold holds was never admitted, and its run only retries admission (an
  // update would be refused as not admitted, once the run took it): the row is ended here, as
  // for one whose workflow is admitting it.
  let workflow: 'closed' | 'admitting' | 'held';
  if (await admissionHoldOf(deps.pool, job.id)) workflow = 'held';
  else
    try {
      return await updateJobWorkflow(deps, job, cancelJobUpdate, cancel);
    } catch (error) {
      if (error instanceof WorkflowClosedError) workflow = 'closed';
      else if (error instanceof ServiceError && error.message === NOT_ADMITTED)
        workflow = 'admitting';
      else if (error instanceof ServiceError && error.problemType === 'job-terminal') {
        // Settled behind the workflow's back as the cancel arrived: that outcome stands.
        const ended = await findJob(deps.pool, job.id);
        throw ended?.terminalStatus ? endedAlready(ended) : error;
      } else throw error;
    }
  // Nothing runs the job any more (its workflow closed and the sweeper gave up on it), or its
  // workflow is still admitting it (reading the plan, writing attempt 1) and cannot take the
  // cancel yet: end the row here. Nothing is sent for it after this (a call begins only on an
  // open job), and anything that still arrives loses the CAS; an admitting workflow finds the
  // job ended and closes.
  const record = { ...cancellationRecord(cancel), workflow };
  const ended = await endJobWithoutResult(deps, job.id, 'cancelled', record);
  deps.logger.info({ jobId: job.id, ...record }, 'job cancelled without its workflow');
  if (ended.status !== 'cancelled') throw endedAlready(ended);
  // The ending settled the job's attempts in flight (migration 0018); its events go to their
  // senders now, since no workflow runs the job to hand them over.
  await startEventSenders(senderDeps(deps), job.id);
  return {
    jobId: job.id,
    status: ended.status,
    attempts: (await listAttempts(deps.pool, job.id)).map(attemptSummary),
    waitingOn: `done: ${ended.status}`,
    needsOperator: false,
    run: 0,
  };
}

/** The job had ended before a cancel could: with what, and by which attempt. */
function endedAlready(job: Pick<JobRecord, 'id' | 'terminalStatus' | 'completedBy'>): ServiceError {
  return new ServiceError(
    'job-terminal',
    notCancelledMessage(job.id, job.terminalStatus ?? 'ended'),
    { jobStatus: job.terminalStatus, completedBy: job.completedBy },
  );
}
