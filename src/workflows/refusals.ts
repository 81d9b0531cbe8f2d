/** The workflow's typed refusals and how it reads the failures of its activities. */
import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  isCancellation,
} from '@temporalio/workflow';
import { FAILURES, typedFailure, type FailureType } from '../domain/failures';
import type { Refusal } from './policy';

export const TEMPORAL_CANCEL = {
  operator: 'temporal',
  reason: 'the workflow was cancelled through Temporal (Web UI, CLI or a parent workflow)',
};

/** Why the workflow stopped waiting for a call it had started. */
export function abandonment(error: unknown): Record<string, unknown> {
  if (isCancellation(error))
    return { code: 'abandoned', message: 'the workflow stopped waiting for this call' };
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  // Another execution of the call began it: this one sent nothing, that one may still land.
  if (cause instanceof ApplicationFailure && cause.type === FAILURES.callBegunElsewhere)
    return { code: 'call_begun_elsewhere', message: cause.message };
  if (cause instanceof TimeoutFailure)
    return {
      code: 'timeout',
      timeoutType: String(cause.timeoutType),
      message: `the call did not finish in time (${cause.message})`,
    };
  return {
    code: 'activity_failure',
    message: (cause ?? (error as Error))?.message ?? String(error),
  };
}

/**
 * A typed, final refusal: what a caller of an update (or the workflow's parent) sees. `type` is
 * one of the catalogue's, or one read back from an activity's failure and passed on as it came.
 */
export function refuse(type: string, message: string, details?: unknown): never {
  throw typedFailure(type as FailureType, message, details);
}

/** The typed failure behind an activity failure, if it is one of ours. */
export function failureOf(error: unknown): ApplicationFailure | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** Refuses when the policy says so. */
export function refuseIf(refusal: Refusal | undefined): void {
  if (refusal) refuse(refusal.type, refusal.message, refusal.details);
}
