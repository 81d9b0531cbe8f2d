import type { JobRecord } from '../db/jobs';

/** Rules broken by a request, each with the stable problem type the API reports. */
export class ServiceError extends Error {
  constructor(
    readonly problemType: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export class IdempotencyKeyReuseError extends ServiceError {
  constructor(readonly existing: JobRecord) {
    super(
      'idempotency-key-reuse',
      'This Idempotency-Key was already used for a different request; the existing job is unchanged.',
      { jobId: existing.id },
    );
    this.name = 'IdempotencyKeyReuseError';
  }
}
