import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from '../db/pool';
import { pendingEventKeys, strandedDeliveries, unsentDeliveries } from '../db/webhookDeliveries';
import { webhookWorkflowId, type WebhookRetry } from '../domain/webhooks';
import type { Logger } from '../logger';
import { CURRENT_PATCH_EPOCH, WEBHOOK_SENDER_WORKFLOW_TYPE } from '../workflows/definitions';

/** Deliveries looked at per round at most, least recently tried first; the rest wait for the next. */
export const BACKSTOP_BATCH = 20;

/** What starting a job's webhook senders from outside its workflow takes. */
export interface SenderStartDeps {
  pool: Pool;
  temporal: Client;
  /** The job task queue, where the sender workflows run. */
  taskQueue: string;
  retry: WebhookRetry;
  logger: Logger;
}

/** Starts the sender of one event of a job; false when one already runs (it will send it). */
async function startSender(deps: SenderStartDeps, jobId: string, eventKey: string) {
  try {
    await deps.temporal.workflow.start(WEBHOOK_SENDER_WORKFLOW_TYPE, {
      workflowId: webhookWorkflowId(jobId, eventKey),
      taskQueue: deps.taskQueue,
      args: [{ jobId, eventKey, retry: deps.retry, patchEpoch: CURRENT_PATCH_EPOCH }],
      staticSummary: `webhooks: ${eventKey} of job ${jobId}`,
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/**
 * Hands a job's waiting events to their senders, from outside the job's workflow: what the
 * database wrote with an ending (or a late result) when no workflow runs the job to hand it over
 * itself (the API ended it, the run was terminated). Returns how many senders it started. What
 * it wrote stands whatever happens here: a sender it could not start (Temporal out of reach) is
 * logged, and started by the workers' net for events nobody took up (startMissingSenders).
 */
export async function startEventSenders(deps: SenderStartDeps, jobId: string): Promise<number> {
  let started = 0;
  try {
    for (const eventKey of await pendingEventKeys(deps.pool, jobId))
      if (await startSender(deps, jobId, eventKey)) started += 1;
  } catch (error) {
    deps.logger.warn(
      { err: error, jobId },
      "could not hand the job's webhook events to their senders; a worker will",
    );
  }
  return started;
}

/**
 * The backstops of at-least-once delivery: a delivery never tried `unsentAfterMs` after it was
 * written (no workflow was left to hand it over), or one that has waited `strandedAfterMs` with
 * no sender holding it (a sender that was terminated, say), gets a sender. A sender already
 * running for it makes the start a no-op. Returns how many it started.
 */
export async function startMissingSenders(
  deps: SenderStartDeps,
  waits: { unsentAfterMs: number; strandedAfterMs?: number },
): Promise<number> {
  const missing = [
    ...(await unsentDeliveries(deps.pool, waits.unsentAfterMs, BACKSTOP_BATCH)),
    ...(waits.strandedAfterMs === undefined
      ? []
      : await strandedDeliveries(deps.pool, waits.strandedAfterMs, BACKSTOP_BATCH)),
  ];
  let started = 0;
  for (const { jobId, eventKey } of missing) {
    if (!(await startSender(deps, jobId, eventKey))) continue;
    started += 1;
    deps.logger.warn({ jobId, eventKey }, 'a webhook delivery had no sender: started one');
  }
  return started;
}
