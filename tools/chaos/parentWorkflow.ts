/**
 * A service's own workflow that starts a onejob job as its child, as a service would: the
 * child runs under the workflow id derived from (owner, key), so it is the same job an HTTP
 * create with that key makes (the recipe of test/workflows/orderWorkflow.ts). The campaign races
 * the two.
 */
import { startChild } from '@temporalio/workflow';
import {
  JOB_WORKFLOW_TYPE,
  jobChildOptions,
  type JobWorkflowInput,
  type JobWorkflowResult,
} from '../../src/workflow';

export interface ChildJobOrder {
  owner: string;
  key: string;
  jobTaskQueue: string;
  intent: NonNullable<JobWorkflowInput['intent']>;
}

type JobWorkflow = (input: JobWorkflowInput) => Promise<JobWorkflowResult>;

/** Starts the job as a child and ends: the job goes on without its parent. */
export async function startJobAsChild(order: ChildJobOrder): Promise<{ workflowId: string }> {
  const child = await startChild<JobWorkflow>(
    JOB_WORKFLOW_TYPE,
    jobChildOptions(
      { ownerId: order.owner, idempotencyKey: order.key, intent: order.intent },
      order.jobTaskQueue,
    ),
  );
  return { workflowId: child.workflowId };
}
