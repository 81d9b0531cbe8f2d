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
