import { isGrpcServiceError, ServiceError as TemporalServiceError } from '@temporalio/client';
import { NamespaceNotFoundError } from '@temporalio/common';
import type { ProblemType } from '../api/problems';
import type { JobRecord } from '../db/jobs';
import { KEY_REUSE_MESSAGE } from '../domain/failures';

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

export class IdempotencyKeyReuseError extends ServiceError {
  constructor(readonly existing: JobRecord) {
    super('idempotency-key-reuse', KEY_REUSE_MESSAGE, { jobId: existing.id });
    this.name = 'IdempotencyKeyReuseError';
  }
}

/**
 * gRPC statuses with which Temporal refuses a request for what it is, not for the moment:
 * INVALID_ARGUMENT (an id or search attribute the server will not take), NOT_FOUND (no such
 * namespace), PERMISSION_DENIED, FAILED_PRECONDITION, UNAUTHENTICATED.
 */
const GRPC_REFUSALS = new Set([3, 5, 7, 9, 16]);

/** The engine's reason when an error is Temporal refusing the request; else undefined. */
export function temporalRefusalReason(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    // The client turns NOT_FOUND for a namespace into an error type of its own.
    if (current instanceof NamespaceNotFoundError) return current.message;
    if (isGrpcServiceError(current) && GRPC_REFUSALS.has(current.code)) return current.details;
    current =
      current instanceof TemporalServiceError
        ? current.cause
        : (current as { cause?: unknown }).cause;
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
