/** What the job workflow hands to the owner's webhooks: an attempt that waits, the ending. */
import { patched } from '@temporalio/workflow';
import { webhookLookup } from './activityStubs';
import type { JobRun } from './jobRun';
import { COMPLETION_WEBHOOKS, startWebhookSender } from './webhookSender';

/** Tells the owner's webhooks that an attempt waits for an operator. */
export async function callOperator(job: JobRun, jobId: string, attemptId: string): Promise<void> {
  job.callingOperator(attemptId);
  const { eventKey, retry } = await job.db.raiseNeedsOperator({ jobId, attemptId });
  if (eventKey) await startWebhookSender(jobId, eventKey, retry);
}

/**
 * Hands the job's ending events (written with the ending, migration 0016) to their senders,
 * which outlive this workflow: its result never waits for a receiver.
 */
export async function announceEnding(jobId: string): Promise<void> {
  if (!patched(COMPLETION_WEBHOOKS)) return;
  const { eventKeys, retry } = await webhookLookup.webhookEventsWaiting({ jobId });
  for (const eventKey of eventKeys) await startWebhookSender(jobId, eventKey, retry);
}
