import { attemptThatMayTakeEffect, releaseJobKey } from '../db/jobKeyRelease';
import { findJob, type JobRecord } from '../db/jobs';
import type { Pool } from '../db/pool';
import { isUuid } from '../domain/identity';
import type { Logger } from '../logger';
import { ServiceError } from './errors';

/**
 * An operator's release of an ended job's key: the job stays as it is, and the next create
 * with the same (owner, key) makes a new job, linked to it. Refused while the job has not
 * ended, while any of its attempts may still take effect (a charge that may yet land must not
 * meet a second one under the next generation), and once the key was released (the record
 * names who did it). Undefined: no such job.
 */
export async function releaseKey(
  deps: { pool: Pool; logger: Logger },
  operator: string,
  jobId: string,
  reason: string,
): Promise<JobRecord | undefined> {
  if (!isUuid(jobId)) return undefined;
  const released = await releaseJobKey(deps.pool, jobId, { operator, reason });
  if (released) {
    deps.logger.info(
      {
        event: 'key_released',
        jobId,
        ownerId: released.ownerId,
        idempotencyKey: released.idempotencyKey,
        keyGeneration: released.keyGeneration,
        operator,
        reason,
      },
      'job key released',
    );
    return released;
  }
  const job = await findJob(deps.pool, jobId);
  if (!job) return undefined;
  if (!job.terminalStatus)
    throw new ServiceError(
      'job-not-ended',
      `job ${job.id} is ${job.status}: only the key of a job that has ended can be released`,
    );
  const open = job.keyRelease ? undefined : await attemptThatMayTakeEffect(deps.pool, job.id);
  if (open)
    throw new ServiceError(
      'attempt-may-take-effect',
      `attempt ${open.attemptId} of job ${job.id} is ${open.state}${open.callOpen && open.state !== 'running' ? ' and its call may still answer' : ''}: it may still take effect, so the key stays with this job until it settles (a late answer, a status lookup, a callback, or an operator's resolve)`,
      { attempt: open },
    );
  throw new ServiceError('key-already-released', `the key of job ${job.id} was released already`, {
    keyRelease: job.keyRelease,
    supersededBy: job.supersededBy,
  });
}
