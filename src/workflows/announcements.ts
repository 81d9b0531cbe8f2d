/** What the job workflow hands to the owner's webhooks: an attempt that waits, the ending. */
import { webhookLookup } from './activityStubs';
import type { JobRun } from './jobRun';
import { COMPLETION_WEBHOOKS } from './patches';
import { startWebhookSender } from './webhookSender';

/** Tells the owner's webhooks that an attempt waits for an operator. */
export async function callOperator(job: JobRun, jobId: string, attemptId: string): Promise<void> {
  job.callingOperator(attemptId);
  const { eventKey, retry } = await job.db.raiseNeedsOperator({ jobId, attemptId });
  if (eventKey) await startWebhookSender(jobId, eventKey, retry);
}

/**
 * Hands the job's ending events (written with the ending, migration 0016) to their senders,
 * which outlive this workflow: its result never waits for a receiver. A job whose owner had no
 * endpoint at admission does not ask (JobPlan.ownerHasWebhooks): one local activity, one
 * transaction and a history event fewer for most jobs. Should an endpoint be registered before
 * the ending, its events are handed over by the workers' backstop within
 * DEFAULTS.unsentDeliveryAfterMs.
 */
export async function announceEnding(job: JobRun, jobId: string): Promise<void> {
  if (!job.patched(COMPLETION_WEBHOOKS) || job.plan?.ownerHasWebhooks === false) return;
  const { eventKeys, retry } = await webhookLookup.webhookEventsWaiting({ jobId });
  for (const eventKey of eventKeys) await startWebhookSender(jobId, eventKey, retry);
}
