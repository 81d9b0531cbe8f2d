import type { AttemptRecord } from '../db/attempts';
import type { JobRecord } from '../db/jobs';

/** The job as clients see it. Raw provider output of losing attempts never appears here. */
export function jobResource(job: JobRecord, attempts: AttemptRecord[] | undefined) {
  return {
    id: job.id,
    status: job.status,
    type: job.type,
    input: job.input,
    providers: job.providers,
    mode: job.mode,
    idempotencyKey: job.idempotencyKey,
    workflowId: job.workflowId,
    result: job.result ?? null,
    completedBy: job.completedBy,
    failure: job.failure ?? null,
    attemptCount: attempts?.length ?? job.attemptCount,
    attempts: (attempts ?? []).map((attempt) => ({
      id: attempt.id,
      seq: attempt.seq,
      provider: attempt.provider,
      state: attempt.state,
      error: attempt.error ?? null,
      startedAt: attempt.startedAt?.toISOString() ?? null,
      finishedAt: attempt.finishedAt?.toISOString() ?? null,
    })),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}
