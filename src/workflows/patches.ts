/**
 * Patch ids of the workflows' paths that changed after runs had taken them
 * (docs/changing-workflows.md): each is asked exactly where the paths part, so a recorded run
 * replays the path it took. Local admission's is in activityStubs.ts; which of them a run asks
 * at all, patchEpochs.ts decides.
 */

/** Patch id of leaving the looks at a blocked job's unknown attempt to the workers' reconciler. */
export const RECHECKS_BY_RECONCILER = 'rechecks-by-reconciler';

/** Patch id of refusing an intent of a bad shape before admission (runs that began without it admitted it). */
export const INTENT_SHAPE_CHECK = 'intent-shape-check';

/**
 * Patch ids of the retry table's later rules (retryPolicy.ts RetryRuleChanges): a retry leaves
 * room for the plan's untried providers (runs recorded before it retried while any room was
 * left), an attempt whose call never began is retried (runs recorded before it moved on), and
 * so is a call cut off at its late-result window (runs recorded before it moved on).
 */
export const RETRY_LEAVES_ROOM = 'retry-leaves-room-for-fallbacks';
export const NEVER_SENT_RETRIED = 'never-sent-retried';
export const LATE_WINDOW_RETRIED = 'late-window-retried';

/**
 * Patch id of a new run retrying its closed run's last failed attempt as that run would have
 * (at the time it noted, if it did); runs recorded before it went on after that attempt.
 */
export const RESUME_PLANNED_RETRY = 'resume-planned-retry';

/** Patch id of a run that finds its job ended at admission handing over the ending's events. */
export const ANNOUNCE_FOUND_ENDING = 'announce-found-ending';

/**
 * Patch id of completion webhooks: the job's events are handed to their senders when it ends,
 * and an attempt left unknown sends `job.needs_operator`. Runs recorded without it did neither.
 */
export const COMPLETION_WEBHOOKS = 'completion-webhooks';

/**
 * Patch id of the webhook task queue: rounds of sends go to a queue of their own. Senders
 * recorded before it sent on the provider-call queue, where their activity is still served.
 */
export const WEBHOOK_QUEUE = 'webhook-queue';

/**
 * Patch id of a window for each delivery: a sender that gives up ends only what was written
 * before it began, and one written since (a redelivery that joined it) goes on in a new run with
 * a window of its own. Senders recorded before it gave up everything that waited.
 */
export const OWN_WINDOW = 'delivery-own-window';
