/**
 * Which of the workflows' patches a run asks its history about, by the epoch its start names
 * (`JobWorkflowInput.patchEpoch`, `WebhookSenderInput.patchEpoch`).
 *
 * A patch's marker, and the `TemporalChangeVersion` upsert the SDK writes beside it, exist so
 * that a run recorded before the patch replays its old path. A run begun by code that has every
 * patch of an epoch has no older path to replay: asking would only add two history events per
 * patch to every job (four on a happy path, a fifth of its events). So every start names the
 * epoch of the code that made it, and a run takes the patches settled by then as given: no
 * marker, no upsert. A run without an epoch (begun by older code, or by a caller that built its
 * input by hand) asks as before, and replays as before.
 *
 * The price is an order of deployment: workers that know an epoch must be running before
 * anything starts runs in it (docs/changing-workflows.md).
 */
import { patched } from '@temporalio/workflow';
import { LOCAL_ADMISSION } from './activityStubs';
import {
  ANNOUNCE_FOUND_ENDING,
  COMPLETION_WEBHOOKS,
  OWN_WINDOW,
  WEBHOOK_QUEUE,
  INTENT_SHAPE_CHECK,
  LATE_WINDOW_RETRIED,
  NEVER_SENT_RETRIED,
  RECHECKS_BY_RECONCILER,
  RESUME_PLANNED_RETRY,
  RETRY_LEAVES_ROOM,
} from './patches';
import type { RetryRuleChanges } from './retryPolicy';

/** From which epoch on each patch is settled: every run begun in that epoch or later takes it. */
const SETTLED_IN: ReadonlyArray<readonly [epoch: number, patchIds: readonly string[]]> = [
  [
    2,
    [
      LOCAL_ADMISSION,
      INTENT_SHAPE_CHECK,
      COMPLETION_WEBHOOKS,
      ANNOUNCE_FOUND_ENDING,
      RESUME_PLANNED_RETRY,
      RECHECKS_BY_RECONCILER,
      RETRY_LEAVES_ROOM,
      NEVER_SENT_RETRIED,
      LATE_WINDOW_RETRIED,
      WEBHOOK_QUEUE,
      OWN_WINDOW,
    ],
  ],
];

/** Whether this run takes the path a patch added. */
export type PatchQuestion = (patchId: string) => boolean;

/** The patches a run begun in `epoch` takes as given (none before epochs). */
export function settledPatches(epoch: number | undefined): ReadonlySet<string> {
  return new Set(
    SETTLED_IN.filter(([from]) => (epoch ?? 1) >= from).flatMap(([, patchIds]) => patchIds),
  );
}

/** The patch question of a run begun in `epoch`: what is not settled is asked of its history. */
export function patchQuestion(epoch: number | undefined): PatchQuestion {
  const settled = settledPatches(epoch);
  return (patchId) => settled.has(patchId) || patched(patchId);
}

/** The retry table's later rules, as the run's patch question answers them. */
export function retryRulesOf(isPatched: PatchQuestion): RetryRuleChanges {
  return {
    retryLeavesRoomForFallbacks: () => isPatched(RETRY_LEAVES_ROOM),
    neverSentIsRetried: () => isPatched(NEVER_SENT_RETRIED),
    lateWindowIsRetried: () => isPatched(LATE_WINDOW_RETRIED),
  };
}
