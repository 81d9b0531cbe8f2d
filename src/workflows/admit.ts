import { RetryState } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURES } from '../domain/failures';
import { intentShapeRefusal } from '../domain/jsonShape';
import { nonCancellable } from './activityStubs';
import type { JobPlan } from './definitions';
import type { JobRun } from './jobRun';
import { INTENT_SHAPE_CHECK } from './patches';
import { failureOf, refuse } from './refusals';

/**
 * The plan this run follows: the carried one, or admission's. A refused admission is told to a
 * waiting `admit` update, then fails the workflow: it must not run this job.
 */
export async function admit(job: JobRun): Promise<JobPlan> {
  const { input } = job;
  if (input.carried) return input.carried.plan;
  try {
    // An intent too deep (or too large) could not even be handed to admission: serializing it
    // overflows the stack, and a failed workflow task is retried for ever. The patch is asked
    // only for such an intent, so every other history is unchanged.
    const shapeRefusal = input.intent && intentShapeRefusal(input.intent);
    if (shapeRefusal && job.patched(INTENT_SHAPE_CHECK)) refuse(FAILURES.invalidJob, shapeRefusal);
    // Not cancellable: once it has begun, the rows it writes must be known to this workflow.
    const { firstAttempt, ...plan } = await nonCancellable(() =>
      job.db.admitJob({
        ...input,
        workflowId: workflowInfo().workflowId,
        startFirstAttempt: true,
      }),
    );
    // What admission returned decides, so a history recorded before admission wrote attempt 1
    // (no firstAttempt in its result) replays along its own path, through startAttempt.
    job.firstAttemptWritten(firstAttempt);
    return plan;
  } catch (error) {
    // Tell a waiting admission update why, then fail: this workflow must not run this job.
    const failure = failureOf(error);
    job.admissionFailed({
      type: failure?.type ?? FAILURES.admissionFailed,
      message: failure?.message ?? (error as Error)?.message ?? 'admission failed',
    });
    await condition(allHandlersFinished);
    // A local activity's failure reaches the workflow unwrapped; callers of a Temporal-native
    // start see the same chain either way: the workflow failed, because admitJob failed, with
    // the typed reason as its cause.
    if (error instanceof ApplicationFailure)
      throw new ActivityFailure(
        'admission failed',
        'admitJob',
        undefined,
        // Retryable failures are retried for ever: only a final one ends up here.
        RetryState.NON_RETRYABLE_FAILURE,
        undefined,
        error,
      );
    throw error;
  }
}
