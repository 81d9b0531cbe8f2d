import { isGrpcServiceError } from '@temporalio/client';
import { NamespaceNotFoundError } from '@temporalio/common';
import type { JobRecord } from '../db/jobs';
import { causeChain } from '../domain/causeChain';
import { KEY_REUSE_MESSAGE } from '../domain/failures';
import type { ProblemType } from '../domain/problems';

/** Rules broken by a request, each with the stable problem type the API reports. */
export class ServiceError extends Error {
  constructor(
    readonly problemType: ProblemType,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** The same (owner, key) was already used for a different intent: the existing job stands. */
export function keyReusedFor(existing: JobRecord): ServiceError {
  return new ServiceError('idempotency-key-reuse', KEY_REUSE_MESSAGE, { jobId: existing.id });
}

/**
 * gRPC statuses with which Temporal refuses a request for what it is, not for the moment:
 * INVALID_ARGUMENT (an id or search attribute the server will not take), NOT_FOUND (no such
 * namespace), PERMISSION_DENIED, FAILED_PRECONDITION, UNAUTHENTICATED.
 */
const GRPC_REFUSALS = new Set([3, 5, 7, 9, 16]);

/**
 * Temporal turned an update away before the workflow accepted it, because the workflow's task
 * failed: FAILED_PRECONDITION with the server's "Workflow Task in failed state" (it has failed or
 * timed out again and again: a starved or crashed worker), or "unexpected workflow task failure"
 * (the task that carried the update failed, e.g. a signal came in while it completed the
 * workflow; a fault campaign answered that 500). Nothing was accepted: the server drops an update
 * its failed task had not accepted, so the same update, sent again, is let in or meets the
 * ended workflow once a worker completes the next task.
 */
export function isWorkflowTaskFailing(error: unknown): boolean {
  for (const current of causeChain(error))
    if (
      isGrpcServiceError(current) &&
      current.code === 9 &&
      /workflow task in failed state|unexpected workflow task failure/i.test(current.details)
    )
      return true;
  return false;
}

/**
 * Temporal (1.30 and later) turned an update away because an operator paused the job's workflow
 * (`PauseWorkflowExecution`: `onejob jobs pause`, newer Web UIs and CLIs): FAILED_PRECONDITION with the server's
 * "Workflow is paused". Nothing was taken in; once the workflow is unpaused the same request
 * goes through.
 */
export function isWorkflowPaused(error: unknown): boolean {
  for (const current of causeChain(error)) {
    // An update-with-start says so in its operation's message, its details being the summary.
    const said = (current as { details?: unknown; message?: unknown }) ?? {};
    if (
      (current as { code?: unknown })?.code === 9 &&
      [said.details, said.message].some(
        (text) => typeof text === 'string' && /workflow is paused/i.test(text),
      )
    )
      return true;
  }
  return false;
}

/**
 * An update that the workflow run had taken in, whose run closed before the update completed: an
 * operator reset the run (its new run goes on from the reset point) or terminated it. Whatever
 * the update had begun, the new run's history does not hold it: the same update, sent again,
 * reaches the new run (or finds none, and the job waits for the sweeper's).
 */
export function isRunClosedMidUpdate(error: unknown): boolean {
  for (const current of causeChain(error))
    if (/completed before the update completed/i.test((current as Error)?.message ?? ''))
      return true;
  return false;
}

/** The engine's reason when an error is Temporal refusing the request; else undefined. */
export function temporalRefusalReason(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    // The client turns NOT_FOUND for a namespace into an error type of its own.
    if (current instanceof NamespaceNotFoundError) return current.message;
    if (isGrpcServiceError(current) && GRPC_REFUSALS.has(current.code)) return current.details;
  }
  return undefined;
}

/**
 * The job row is written but Temporal will not start its workflow (a misconfigured namespace
 * or search attribute, say). Answered 503 rather than 500: nothing is lost, the row waits
 * unadmitted, and the client's retry with the same key (or the sweeper) starts it once the
 * engine accepts it.
 */
export class WorkflowStartRefusedError extends ServiceError {
  constructor(
    readonly job: JobRecord,
    readonly reason: string,
  ) {
    super(
      'workflow-start-refused',
      'The workflow engine refused to start this job; the job is recorded and starts once an operator fixes the engine. Retry with the same Idempotency-Key.',
      { jobId: job.id, workflowId: job.workflowId, engineReason: reason },
    );
    this.name = 'WorkflowStartRefusedError';
  }
}
