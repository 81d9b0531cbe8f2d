/** Admission's first step on the Temporal-native path: the job row the workflow writes itself. */
import { insertJobOrFindExisting } from '../db/jobs';
import { FAILURES, KEY_REUSE_MESSAGE, Refusal, typedFailure } from '../domain/failures';
import { jobIdentityProblem } from '../domain/identity';
import { intentShapeRefusal } from '../domain/jsonShape';
import { jobWorkflowId, parseJobWorkflowId } from '../domain/workflowId';
import { ServiceError } from '../service/errors';
import { validateIntent } from '../service/intent';
import type { JobWorkflowInput } from '../workflows/definitions';
import type { ActivityDeps } from './types';

/** The key generation a job workflow id names; undefined when it is no job workflow id. */
function generationOfWorkflowId(workflowId: string): number | undefined {
  try {
    return parseJobWorkflowId(workflowId).generation;
  } catch {
    return undefined;
  }
}

/**
 * The Temporal-native path: the workflow writes the job row itself, with the same checks and
 * the same INSERT … ON CONFLICT as the API, so both paths meet on one row per (owner, key).
 */
export async function writeJobRow(
  { pool, providers }: Pick<ActivityDeps, 'pool' | 'providers'>,
  input: JobWorkflowInput & { workflowId: string },
) {
  const intent = input.intent;
  if (!intent) return undefined;
  // First, since validation walks the intent recursively (other clients than startJob may
  // start this workflow, so the client's check is not enough).
  const shapeRefusal = intentShapeRefusal(intent);
  if (shapeRefusal) throw typedFailure(FAILURES.invalidJob, shapeRefusal);
  const identityProblem = jobIdentityProblem(input.ownerId, input.idempotencyKey);
  if (identityProblem) throw typedFailure(FAILURES.invalidJob, identityProblem);
  // A run started under another id than its (owner, key)'s would squat that id: another key's
  // job could then never start its own workflow. The id names the key's generation too: the
  // first, or a later one after an operator released the key (startJob derives it).
  const generation = generationOfWorkflowId(input.workflowId);
  const derived = jobWorkflowId(input.ownerId, input.idempotencyKey, generation ?? 1);
  if (generation === undefined || input.workflowId !== derived)
    throw typedFailure(
      FAILURES.invalidJob,
      `workflow id ${input.workflowId} is not the one derived from this owner and key (${derived}); start jobs with startJob or jobWorkflowStartOptions`,
    );
  let resolved: ReturnType<typeof validateIntent>;
  try {
    resolved = validateIntent(
      { providers },
      { ...intent, providers: intent.providers ?? undefined },
    );
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    throw new Refusal('invalidJob', `${error.problemType}: ${error.message}`, error.details);
  }
  if (input.requestFingerprint !== undefined && resolved.fingerprint !== input.requestFingerprint)
    throw typedFailure(
      FAILURES.jobIdentityMismatch,
      'the intent does not match the request fingerprint',
    );
  // Under a released key, refused (keyReleased) with the workflow id its next job runs as.
  const { job } = await insertJobOrFindExisting(pool, {
    ownerId: input.ownerId,
    idempotencyKey: input.idempotencyKey,
    requestFingerprint: resolved.fingerprint,
    intent: {
      type: intent.type,
      input: resolved.input,
      providers: resolved.plan,
      mode: resolved.mode,
    },
    workflowId: input.workflowId,
    generation,
    // Only the generation this workflow's id names: another one is another workflow's job.
    workflowIdOfGeneration: (next) => (next === generation ? input.workflowId : undefined),
  });
  // The row was won by another entry point with another intent: that job is not ours to run.
  if (job.requestFingerprint !== resolved.fingerprint)
    throw typedFailure(FAILURES.idempotencyKeyReuse, KEY_REUSE_MESSAGE, { jobId: job.id });
  return job;
}
