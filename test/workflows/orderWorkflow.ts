/**
 * The child-workflow recipe, as a service's own workflow would use it: the job workflow runs as
 * a child under the workflow id derived from (owner, key). Workflow code cannot hash, so the
 * child is given the intent and its first activity computes the fingerprint. Starting the same
 * job again while it runs is refused by Temporal: there is one job.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  setHandler,
  startChild,
} from '@temporalio/workflow';
// The package's workflow-side entry (onejob/dist/src/workflow): safe in the workflow sandbox.
import {
  JOB_WORKFLOW_TYPE,
  jobChildOptions,
  type JobChildOrder,
  type JobWorkflowInput,
  type JobWorkflowResult,
} from '../../src/workflow';

export interface Order {
  owner: string;
  key: string;
  jobTaskQueue: string;
  /** A summary of this text, or a charge of this amount. */
  text?: string;
  charge?: { amountCents: number; currency: string; account: string };
}

type JobWorkflow = (input: JobWorkflowInput) => Promise<JobWorkflowResult>;

function startJobChild(order: Order) {
  const intent: JobChildOrder['intent'] = order.charge
    ? { type: 'charge', input: order.charge, providers: null, mode: 'exclusive' }
    : { type: 'summarize', input: { text: order.text }, providers: null, mode: 'exclusive' };
  // The job outlives this workflow (jobChildOptions abandons it when the parent closes).
  return startChild<JobWorkflow>(
    JOB_WORKFLOW_TYPE,
    jobChildOptions(
      { ownerId: order.owner, idempotencyKey: order.key, intent },
      order.jobTaskQueue,
    ),
  );
}

export async function orderWorkflow(order: Order) {
  const job = await startJobChild(order);
  let secondStartRefused = false;
  try {
    await startJobChild(order);
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    secondStartRefused = true;
  }
  return { result: await job.result(), secondStartRefused };
}

/** Starts the job and ends at once: the job goes on without its parent. */
export async function fireAndForgetOrder(order: Order) {
  const job = await startJobChild(order);
  return { jobWorkflowId: job.workflowId };
}

export const cancelOrderSignal = defineSignal('cancelOrder');

/** Starts the job, and cancels it when the customer withdraws the order. */
export async function cancellableOrder(order: Order) {
  let withdrawn = false;
  setHandler(cancelOrderSignal, () => void (withdrawn = true));
  const scope = new CancellationScope();
  const outcome = scope.run(async () => (await startJobChild(order)).result());
  await condition(() => withdrawn);
  scope.cancel();
  try {
    return { result: await outcome, cancelled: false };
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return { result: null, cancelled: true };
  }
}

export const endOrderSignal = defineSignal('endOrder');

/** Starts the job and ends when told (say, while the job is charging): the job goes on alone. */
export async function orderEndedWhenTold(order: Order) {
  let ended = false;
  setHandler(endOrderSignal, () => void (ended = true));
  const job = await startJobChild(order);
  await condition(() => ended);
  return { jobWorkflowId: job.workflowId };
}
