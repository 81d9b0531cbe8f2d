/**
 * The child-workflow recipe, as a service's own workflow would use it: the job workflow runs as
 * a child under the workflow id derived from (owner, key). Workflow code cannot hash, so the
 * child is given the intent and its first activity computes the fingerprint. Starting the same
 * job again while it runs is refused by Temporal: there is one job.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { startChild } from '@temporalio/workflow';
import { jobWorkflowId } from '../../src/domain/workflowId';
import type { JobWorkflowInput, JobWorkflowResult } from '../../src/workflows/definitions';

export async function orderWorkflow(order: {
  owner: string;
  key: string;
  text: string;
  jobTaskQueue: string;
}) {
  const input: JobWorkflowInput = {
    ownerId: order.owner,
    idempotencyKey: order.key,
    intent: { type: 'summarize', input: { text: order.text }, providers: null, mode: 'exclusive' },
  };
  type JobWorkflow = (input: JobWorkflowInput) => Promise<JobWorkflowResult>;
  const start = () =>
    startChild<JobWorkflow>('jobWorkflow', {
      workflowId: jobWorkflowId(order.owner, order.key),
      taskQueue: order.jobTaskQueue,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  const job = await start();
  let secondStartRefused = false;
  try {
    await start();
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    secondStartRefused = true;
  }
  return { result: await job.result(), secondStartRefused };
}
