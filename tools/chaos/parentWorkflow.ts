/**
 * A service's own workflow that starts a onejob job as its child, as a service would: the
 * child runs under the workflow id derived from (owner, key), so it is the same job an HTTP
 * create with that key makes (the recipe of test/workflows/orderWorkflow.ts). The campaign races
 * the two.
 */
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { jobWorkflowId } from '../../src/domain/workflowId';
import type { JobWorkflowInput, JobWorkflowResult } from '../../src/workflows/definitions';

export interface ChildJobOrder {
  owner: string;
  key: string;
  jobTaskQueue: string;
  intent: NonNullable<JobWorkflowInput['intent']>;
}

type JobWorkflow = (input: JobWorkflowInput) => Promise<JobWorkflowResult>;

/** Starts the job as a child and ends: the job goes on without its parent. */
export async function startJobAsChild(order: ChildJobOrder): Promise<{ workflowId: string }> {
  const child = await startChild<JobWorkflow>('jobWorkflow', {
    workflowId: jobWorkflowId(order.owner, order.key),
    taskQueue: order.jobTaskQueue,
    args: [{ ownerId: order.owner, idempotencyKey: order.key, intent: order.intent }],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  return { workflowId: child.workflowId };
}
