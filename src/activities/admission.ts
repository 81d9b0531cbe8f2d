import { ApplicationFailure } from '@temporalio/common';
import { admissionHoldOf } from '../db/admissionHolds';
import { addJobNote, findJobByKey, latestJobOfKey, markJobAdmitted } from '../db/jobs';
import { inTransaction } from '../db/pool';
import type { AdmittedJob, KeyJobs, KeyJobsInput } from '../workflows/definitions';
import { admitIn, type AdmissionDeps, type AdmissionInput } from './admissionPlan';
import { writeJobRow } from './admissionRow';
import { hedgeBudgetGuard } from './hedgeBudget';

/**
 * Admission: the job row this workflow runs, its plan, and what earlier runs left behind. The
 * steps are admissionRow.ts (the Temporal-native path's row), admissionPlan.ts (the plan) and
 * admissionAttempts.ts (the attempts left in flight, and attempt 1).
 */
export function admissionActivities(deps: AdmissionDeps) {
  const { pool } = deps;
  const context = { deps, hedgingPaused: hedgeBudgetGuard(deps) };

  return {
    /** Which job a key names now: its unreleased job, and its highest generation. */
    async findKeyJobs(input: KeyJobsInput): Promise<KeyJobs> {
      const [live, latest] = await Promise.all([
        findJobByKey(pool, input.ownerId, input.idempotencyKey),
        latestJobOfKey(pool, input.ownerId, input.idempotencyKey),
      ]);
      return {
        live: live
          ? {
              jobId: live.id,
              generation: live.keyGeneration,
              workflowId: live.workflowId,
              requestFingerprint: live.requestFingerprint,
            }
          : null,
        latestGeneration: latest?.keyGeneration ?? 0,
      };
    },

    /**
     * Refuses to run a job whose row is missing or belongs to a different (owner, key, intent);
     * otherwise reads its plan, leaving out fallbacks not certified for the contract in force.
     * One transaction: the job, its certifications and attempts read, its admission and first
     * attempt written. A refusal that leaves a note on the job is thrown once that has committed.
     */
    async admitJob(input: AdmissionInput): Promise<AdmittedJob> {
      const written = input.jobId ? undefined : await writeJobRow(deps, input);
      // Recorded, not admitted, while an operator holds admission of its type.
      const jobId = input.jobId ?? written?.id;
      if (jobId) await refuseWhileHeld(deps, jobId);
      const admission = await inTransaction(pool, async (tx) => {
        const { jobId, outcome } = await admitIn(context, tx, input, written);
        // Last: the UPDATE locks the job row until COMMIT, and an operator's cancel must not
        // wait behind the rest of admission for it.
        await markJobAdmitted(tx, jobId);
        return outcome;
      });
      if ('refused' in admission) throw admission.refused;
      return admission;
    },
  };
}

/** How soon a held admission is tried again by default (ONEJOB_ADMISSION_HOLD_RECHECK_MS). */
const DEFAULT_HOLD_RECHECK_MS = 30_000;

/**
 * While an operator holds admission of the job's type, admission fails with a retryable failure
 * that asks to be tried again after the recheck interval: the workflow's admission step is
 * retried by Temporal until the release, with no workflow code of its own (so every recorded
 * history replays as before). The job says it is held, once per hold.
 */
async function refuseWhileHeld(
  deps: Pick<AdmissionDeps, 'pool' | 'admissionHoldRecheckMs'>,
  jobId: string,
): Promise<void> {
  const hold = await admissionHoldOf(deps.pool, jobId);
  if (!hold) return;
  const since = hold.heldAt.toISOString();
  await addJobNote(deps.pool, jobId, {
    event: 'admission_held',
    reason: `admission held by an operator since ${since}: ${hold.reason}`,
    ...(hold.jobType ? { jobType: hold.jobType } : {}),
  });
  throw ApplicationFailure.create({
    type: ADMISSION_HELD,
    message: `admission of ${hold.jobType ?? 'every job type'} is held since ${since}: ${hold.reason}`,
    nonRetryable: false,
    nextRetryDelay: deps.admissionHoldRecheckMs ?? DEFAULT_HOLD_RECHECK_MS,
  });
}

/** The type of a held admission's failure: retried, never final. */
export const ADMISSION_HELD = 'AdmissionHeld';
