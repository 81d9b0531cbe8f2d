import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  continueAsNew,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { WebhookSendingActivities } from '../activities';
import { webhookWorkflowId, type WebhookRetry } from '../domain/webhooks';
import { db } from './activityStubs';
import { CURRENT_PATCH_EPOCH, type WebhookSenderInput } from './definitions';
import { patchQuestion } from './patchEpochs';
import { OWN_WINDOW, WEBHOOK_QUEUE } from './patches';
import { providerCallTaskQueue, webhookTaskQueue } from './taskQueues';

/**
 * Delivers one event of one job to its owner's endpoints, at least once: rounds of tries (each
 * recorded in its delivery's row) with Temporal's backoff between them, until every delivery of
 * the event has been answered 2xx, its endpoint has gone (410), or `giveUpAfterMs` has passed.
 * A workflow of its own, so that the job's result never waits for a receiver.
 */
export async function webhookSenderWorkflow(input: WebhookSenderInput): Promise<number> {
  const isPatched = patchQuestion(input.patchEpoch);
  const deliver = proxyActivities<WebhookSendingActivities>({
    taskQueue: isPatched(WEBHOOK_QUEUE)
      ? webhookTaskQueue(workflowInfo().taskQueue)
      : providerCallTaskQueue(workflowInfo().taskQueue),
    // One round: a try takes at most 20 s, endpoints side by side, a job's few events in order.
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: input.retry.giveUpAfterMs,
    retry: {
      initialInterval: input.retry.initialIntervalMs,
      backoffCoefficient: 2,
      maximumInterval: input.retry.maximumIntervalMs,
    },
    summary: `deliver ${input.eventKey}`,
  }).deliverWebhooks;
  try {
    return await deliver({ jobId: input.jobId, eventKey: input.eventKey });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const why = error.cause?.message ?? error.message;
    const reason = `given up after ${input.retry.giveUpAfterMs} ms: ${why}`;
    if (!isPatched(OWN_WINDOW)) {
      await db.giveUpWebhooks({ jobId: input.jobId, eventKey: input.eventKey, reason });
      return 0;
    }
    // Rows carry the database's clock and this the server's: on one host, or clocks kept in
    // step, a delivery written since this run began is told apart.
    const { stillWaiting } = await db.giveUpEarlierWebhooks({
      jobId: input.jobId,
      eventKey: input.eventKey,
      senderStartedAt: workflowInfo().runStartTime.getTime(),
      reason,
    });
    if (stillWaiting > 0) await continueAsNew<typeof webhookSenderWorkflow>(input);
    return 0;
  }
}

/**
 * Starts the sender of a job's event, to outlive the job's workflow. A sender already running
 * for it (the same workflow id) will send it: that start is a no-op.
 */
export async function startWebhookSender(
  jobId: string,
  eventKey: string,
  retry: WebhookRetry,
): Promise<void> {
  try {
    await startChild(webhookSenderWorkflow, {
      workflowId: webhookWorkflowId(jobId, eventKey),
      args: [{ jobId, eventKey, retry, patchEpoch: CURRENT_PATCH_EPOCH }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `webhooks: ${eventKey} of job ${jobId}`,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
