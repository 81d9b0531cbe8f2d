import { ApplicationFailure } from '@temporalio/common';
import { admissionHoldOf, type AdmissionHold } from '../db/admissionHolds';
import { markJobAdmitted } from '../db/jobAdmission';
import { addJobNote, findJobByKey, latestJobOfKey } from '../db/jobs';
import { inTransaction, type Queryable } from '../db/pool';
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
      const heldJob = input.jobId ?? written?.id;
      type Admission = AdmittedJob | { refused: Error } | { held: AdmissionHold };
      const admission = await inTransaction(pool, async (tx): Promise<Admission> => {
        // Recorded, not admitted, while an operator holds admission of its type.
        const held = heldJob && (await admissionHoldOf(tx, heldJob));
        if (held) {
          await noteHeld(tx, heldJob, held);
          return { held };
        }
        const { jobId, outcome } = await admitIn(context, tx, input, written);
        // Last: the UPDATE locks the job row until COMMIT, and an operator's cancel must not
        // wait behind the rest of admission for it.
        const { ownerHasWebhooks } = await markJobAdmitted(tx, jobId);
        return 'refused' in outcome ? outcome : { ...outcome, ownerHasWebhooks };
      });
      if ('held' in admission) throw heldFailure(admission.held, deps.admissionHoldRecheckMs);
      if ('refused' in admission) throw admission.refused;
      return admission;
    },
  };
}

/** How soon a held admission is tried again by default (ONEJOB_ADMISSION_HOLD_RECHECK_MS). */
const DEFAULT_HOLD_RECHECK_MS = 30_000;

/** The job says it is held, once per hold (the note names the hold's reason, not its operator). */
async function noteHeld(tx: Queryable, jobId: string, hold: AdmissionHold): Promise<void> {
  await addJobNote(tx, jobId, {
    event: 'admission_held',
    reason: `admission held by an operator since ${hold.heldAt.toISOString()}: ${hold.reason}`,
    ...(hold.jobType ? { jobType: hold.jobType } : {}),
  });
}

/**
 * A held admission fails retryably, asking to be tried again after the recheck interval: the
 * workflow's admission step is retried by Temporal until the release, with no workflow code of
 * its own (so every recorded history replays as before).
 */
function heldFailure(hold: AdmissionHold, recheckMs: number | undefined): ApplicationFailure {
  return ApplicationFailure.create({
    type: ADMISSION_HELD,
    message: `admission of ${hold.jobType ?? 'every job type'} is held since ${hold.heldAt.toISOString()}: ${hold.reason}`,
    nonRetryable: false,
    nextRetryDelay: recheckMs ?? DEFAULT_HOLD_RECHECK_MS,
  });
}

/** The type of a held admission's failure: retried, never final. */
export const ADMISSION_HELD = 'AdmissionHeld';
