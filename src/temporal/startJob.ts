import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { DEFAULTS } from '../domain/defaults';
import { FAILURES, KEY_REUSE_MESSAGE } from '../domain/failures';
import { requestFingerprint } from '../domain/fingerprint';
import { jobIdentityProblem } from '../domain/identity';
import type { JobMode } from '../domain/job';
import { intentShapeRefusal } from '../domain/jsonShape';
import { jobWorkflowId } from '../domain/workflowId';
import { isWorkflowPaused } from '../service/errors';
import {
  KEY_JOBS_WORKFLOW_TYPE,
  admissionQuery,
  admitUpdate,
  type JobWorkflowResult,
  type KeyJobs,
} from '../workflows/definitions';
import { jobWorkflowStartOptions } from '../workflows/startOptions';

/** The same (owner, key) was already used for a different intent; the existing job is unchanged. */
export class IdempotencyKeyReuseError extends Error {
  constructor(readonly workflowId: string) {
    super(`${KEY_REUSE_MESSAGE} (workflow ${workflowId})`);
    this.name = 'IdempotencyKeyReuseError';
  }
}

/**
 * The key's job workflow is paused in Temporal (1.30+), which takes no update meanwhile, and the
 * admission this start asks for is one: nothing was done; once it is unpaused, start again.
 */
export class JobWorkflowPausedError extends Error {
  constructor(readonly workflowId: string) {
    super(
      `job workflow ${workflowId} is paused in Temporal, which takes no update while paused: nothing was done; unpause it (onejob jobs unpause), then start again`,
    );
    this.name = 'JobWorkflowPausedError';
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

/** How often startJob follows a key to another generation before it gives up (a key released again and again meanwhile). */
const MAX_GENERATION_HOPS = 4;

/**
 * Starts a job from a service that already runs Temporal, with the HTTP API's guarantees: the
 * workflow id comes from (owner, key), update-with-start reuses a running job, the admission
 * update refuses a different intent under the same key, and the job row is written with the
 * same INSERT … ON CONFLICT as the API. An HTTP-created and a Temporal-created job with the same
 * (owner, key) are one job, whichever came first. After an operator released the key, both
 * entry points answer alike: the key's live job, or else a new job of its next generation.
 */
export async function startJob(client: Client, request: StartJobRequest): Promise<StartedJob> {
  const identityProblem = jobIdentityProblem(request.owner, request.idempotencyKey);
  if (identityProblem) throw new InvalidJobIdentityError(identityProblem);
  const mode = request.mode ?? DEFAULTS.jobMode;
  const intent = {
    type: request.type,
    input: request.input,
    providers: request.providers ?? null,
    mode,
  };
  // Before anything walks, hashes or serializes it: a value nested deep enough overflows all three.
  const shapeRefusal = intentShapeRefusal(intent);
  if (shapeRefusal)
    throw ApplicationFailure.create({
      type: FAILURES.invalidJob,
      message: shapeRefusal,
      nonRetryable: true,
    });
  const fingerprint = requestFingerprint(intent);
  const taskQueue = request.taskQueue ?? DEFAULTS.taskQueue;

  /** Update-with-start of the key's job of one generation; `ended` when it had already ended. */
  const startGeneration = async (generation: number): Promise<StartedJob & { ended: boolean }> => {
    const options = jobWorkflowStartOptions(
      {
        ownerId: request.owner,
        idempotencyKey: request.idempotencyKey,
        type: request.type,
        providers: request.providers,
        mode,
        requestFingerprint: fingerprint,
        workflowId: jobWorkflowId(request.owner, request.idempotencyKey, generation),
      },
      taskQueue,
    );
    const workflowId = options.workflowId;
    const handle = client.workflow.getHandle<() => Promise<JobWorkflowResult>>(workflowId);
    const started = (jobId: string, ended: boolean) => ({
      jobId,
      workflowId,
      ended,
      result: () => handle.result(),
    });
    const start = new WithStartWorkflowOperation(options.workflowType, {
      ...options,
      args: [{ ...options.args[0], intent }],
    });
    try {
      const { jobId, ended } = await client.workflow.executeUpdateWithStart(admitUpdate, {
        args: [{ requestFingerprint: fingerprint }],
        startWorkflowOperation: start,
      });
      return started(jobId, ended === true);
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
        if (error.cause.type === FAILURES.idempotencyKeyReuse) {
          throw new IdempotencyKeyReuseError(workflowId);
        }
        // The refusal itself says why (e.g. "invalid-input: …"); it is more use than the wrapper.
        throw error.cause;
      }
      if (isWorkflowPaused(error)) throw new JobWorkflowPausedError(workflowId);
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
        return started(admitted.jobId, true);
      }
      throw error;
    }
  };

  /** Which job the key names now, read in PostgreSQL by a short workflow on onejob's workers. */
  const keyJobs = (): Promise<KeyJobs> =>
    client.workflow.execute(KEY_JOBS_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `key-jobs/${randomUUID()}`,
      args: [{ ownerId: request.owner, idempotencyKey: request.idempotencyKey }],
    });

  let generation = 1;
  for (let hop = 0; ; hop++) {
    let job: StartedJob & { ended: boolean };
    try {
      job = await startGeneration(generation);
    } catch (error) {
      // This generation's run found the key released (its workflow had been deleted, say):
      // look the key up as below.
      if (!(error instanceof ApplicationFailure && error.type === FAILURES.keyReleased))
        throw error;
      if (hop >= MAX_GENERATION_HOPS) throw error;
      job = { jobId: '', workflowId: '', ended: true, result: () => Promise.reject(error) };
    }
    // A job still open keeps its key: nobody can have released it. One that ended may have
    // been released since, and then the key names another job, or none until the next create.
    if (!job.ended) return withoutEnded(job);
    const key = await keyJobs();
    const next = key.live ? key.live.generation : key.latestGeneration + 1;
    if (key.live?.jobId === job.jobId || hop >= MAX_GENERATION_HOPS) {
      if (!job.jobId)
        throw new Error(`the key of ${request.idempotencyKey} kept changing generations`);
      return withoutEnded(job);
    }
    if (key.live && key.live.requestFingerprint !== fingerprint)
      throw new IdempotencyKeyReuseError(key.live.workflowId);
    generation = next;
  }
}

function withoutEnded({ ended: _ended, ...job }: StartedJob & { ended: boolean }): StartedJob {
  return job;
}
