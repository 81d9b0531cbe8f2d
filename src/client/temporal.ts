import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES, KEY_REUSE_MESSAGE } from '../domain/failures';
import { requestFingerprint } from '../domain/fingerprint';
import { jobIdentityProblem } from '../domain/identity';
import type { JobMode } from '../domain/job';
import {
  DEFAULT_TASK_QUEUE,
  admissionQuery,
  admitUpdate,
  type JobWorkflowResult,
} from '../workflows/definitions';
import { jobWorkflowStartOptions } from '../workflows/startOptions';

/** The same (owner, key) was already used for a different intent; the existing job is unchanged. */
export class IdempotencyKeyReuseError extends Error {
  constructor(readonly workflowId: string) {
    super(`${KEY_REUSE_MESSAGE} (workflow ${workflowId})`);
    this.name = 'IdempotencyKeyReuseError';
  }
}

/** The owner or the key cannot identify a job (the same rule as the HTTP API's). */
export class InvalidJobIdentityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidJobIdentityError';
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
  const identityProblem = jobIdentityProblem(request.owner, request.idempotencyKey);
  if (identityProblem) throw new InvalidJobIdentityError(identityProblem);
  const mode = request.mode ?? 'exclusive';
  const intent = {
    type: request.type,
    input: request.input,
    providers: request.providers ?? null,
    mode,
  };
  const fingerprint = requestFingerprint(intent);
  const options = jobWorkflowStartOptions(
    {
      ownerId: request.owner,
      idempotencyKey: request.idempotencyKey,
      type: request.type,
      providers: request.providers,
      mode,
      requestFingerprint: fingerprint,
    },
    request.taskQueue ?? DEFAULT_TASK_QUEUE,
  );
  const workflowId = options.workflowId;
  const handle = client.workflow.getHandle<() => Promise<JobWorkflowResult>>(workflowId);
  const started = (jobId: string): StartedJob => ({
    jobId,
    workflowId,
    result: () => handle.result(),
  });

  const start = new WithStartWorkflowOperation(options.workflowType, {
    ...options,
    args: [{ ...options.args[0], intent }],
  });
  try {
    const { jobId } = await client.workflow.executeUpdateWithStart(admitUpdate, {
      args: [{ requestFingerprint: fingerprint }],
      startWorkflowOperation: start,
    });
    return started(jobId);
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
      if (error.cause.type === FAILURES.idempotencyKeyReuse) {
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
