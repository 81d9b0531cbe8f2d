import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from '../db/pool';
import { strandedDeliveries } from '../db/webhooks';
import { webhookWorkflowId, type WebhookRetry } from '../domain/webhooks';
import type { Logger } from '../logger';
import { WEBHOOK_SENDER_WORKFLOW_TYPE } from '../workflows/definitions';

/** Deliveries looked at per round at most, least recently tried first; the rest wait for the next. */
export const BACKSTOP_BATCH = 20;

/**
 * The backstop of at-least-once delivery: a delivery that has waited long with no sender
 * holding it (its job's workflow was terminated before it handed the event over, say) gets a
 * sender. A sender already running for it makes the start a no-op. Returns how many it started.
 */
export async function startStrandedSenders(
  deps: { pool: Pool; temporal: Client; taskQueue: string; retry: WebhookRetry; logger: Logger },
  olderThanMs: number,
): Promise<number> {
  let started = 0;
  for (const { jobId, eventKey } of await strandedDeliveries(
    deps.pool,
    olderThanMs,
    BACKSTOP_BATCH,
  )) {
    try {
      await deps.temporal.workflow.start(WEBHOOK_SENDER_WORKFLOW_TYPE, {
        workflowId: webhookWorkflowId(jobId, eventKey),
        taskQueue: deps.taskQueue,
        args: [{ jobId, eventKey, retry: deps.retry }],
      });
      started += 1;
      deps.logger.warn({ jobId, eventKey }, 'a webhook delivery had no sender: started one');
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
  return started;
}
