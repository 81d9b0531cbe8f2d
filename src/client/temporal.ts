import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { requestFingerprint } from '../domain/fingerprint';
import type { JobMode } from '../domain/job';
import { jobWorkflowId } from '../domain/workflowId';
import {
  AttemptCount,
  DEFAULT_TASK_QUEUE,
  JobOwner,
  JobStatusAttribute,
  JobType,
  REFUSALS,
  admissionQuery,
  admitUpdate,
  type JobWorkflowInput,
  type JobWorkflowResult,
} from '../workflows/definitions';

/** The same (owner, key) was already used for a different intent; the existing job is unchanged. */
export class IdempotencyKeyReuseError extends Error {
  constructor(readonly workflowId: string) {
    super(
      `idempotency key already used for a different request (workflow ${workflowId}); the existing job is unchanged`,
    );
    this.name = 'IdempotencyKeyReuseError';
  }
}

export interface StartJobRequest {
  /** The owner, as your service knows it (the same owner the API's tokens map to). */
  owner: string;
  idempotencyKey: string;
  type: string;
  input: Record<string, unknown>;
  providers?: string[];
  mode?: JobMode;
  /** onejob's task queue; default `onejob`. */
  taskQueue?: string;
}

export interface StartedJob {
  jobId: string;
  workflowId: string;
  /** Resolves with the job's outcome when its workflow ends. */
  result(): Promise<JobWorkflowResult>;
}

/**
 * Starts a job from a service that already runs Temporal, with the HTTP API's guarantees: the
 * workflow id comes from (owner, key), update-with-start reuses a running job, the admission
 * update refuses a different intent under the same key, and the job row is written with the
 * same INSERT … ON CONFLICT as the API. An HTTP-created and a Temporal-created job with the same
 * (owner, key) are one job, whichever came first.
 */
export async function startJob(client: Client, request: StartJobRequest): Promise<StartedJob> {
  const mode = request.mode ?? 'exclusive';
  const intent = {
    type: request.type,
    input: request.input,
    providers: request.providers ?? null,
    mode,
  };
  const fingerprint = requestFingerprint(intent);
  const workflowId = jobWorkflowId(request.owner, request.idempotencyKey);
  const args: JobWorkflowInput = {
    ownerId: request.owner,
    idempotencyKey: request.idempotencyKey,
    requestFingerprint: fingerprint,
    intent,
  };
  const handle = client.workflow.getHandle<() => Promise<JobWorkflowResult>>(workflowId);
  const started = (jobId: string): StartedJob => ({
    jobId,
    workflowId,
    result: () => handle.result(),
  });

  const start = new WithStartWorkflowOperation('jobWorkflow', {
    workflowId,
    taskQueue: request.taskQueue ?? DEFAULT_TASK_QUEUE,
    args: [args],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    staticSummary: `${request.type} job for ${request.owner} (key ${request.idempotencyKey})`,
    typedSearchAttributes: [
      { key: JobOwner, value: request.owner },
      { key: JobType, value: request.type },
      { key: JobStatusAttribute, value: 'pending' },
      { key: AttemptCount, value: 0 },
    ],
  });
  try {
    const { jobId } = await client.workflow.executeUpdateWithStart(admitUpdate, {
      args: [{ requestFingerprint: fingerprint }],
      startWorkflowOperation: start,
    });
    return started(jobId);
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
      if (error.cause.type === REFUSALS.idempotencyKeyReuse) {
        throw new IdempotencyKeyReuseError(workflowId);
      }
      // The refusal itself says why (e.g. "invalid-input: …"); it is more use than the wrapper.
      throw error.cause;
    }
    // The job's workflow has already ended: it is the same job if the intent is the same.
    if (
      error instanceof WorkflowExecutionAlreadyStartedError ||
      (error as Error)?.name === 'WorkflowExecutionAlreadyStartedError'
    ) {
      const admitted = await handle.query(admissionQuery);
      if (admitted.requestFingerprint !== fingerprint)
        throw new IdempotencyKeyReuseError(workflowId);
      if (!admitted.jobId)
        throw new Error(`job workflow ${workflowId} ended without admitting its job`);
      return started(admitted.jobId);
    }
    throw error;
  }
}
