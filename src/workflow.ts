/**
 * What a service's own workflow code imports of onejob (`onejob/dist/src/workflow`): safe in
 * the workflow sandbox, unlike the package's entry (src/index.ts), whose `startJob` brings
 * @temporalio/client, which Temporal's workflow bundler refuses. The child-workflow recipe is
 * test/workflows/orderWorkflow.ts.
 */
export { jobWorkflowId } from './domain/workflowId';
export { JOB_WORKFLOW_TYPE } from './workflows/definitions';
export type { JobWorkflowInput, JobWorkflowResult } from './workflows/definitions';
export { jobChildOptions } from './workflows/startOptions';
export type { JobChildOrder } from './workflows/startOptions';
