/** The public surface of the onejob package: the Temporal-native entry and the shared vocabulary. */
// The HTTP client is the onejob-client package (client/): it depends on nothing of the server.
export {
  IdempotencyKeyReuseError,
  InvalidJobIdentityError,
  JobWorkflowPausedError,
  startJob,
} from './temporal/startJob';
export type { StartedJob, StartJobRequest } from './temporal/startJob';
export { jobWorkflowId, parseJobWorkflowId } from './domain/workflowId';
export { ATTEMPT_STATES, JOB_MODES, JOB_STATUSES } from './domain/job';
export type { AttemptState, JobMode, JobStatus } from './domain/job';
// What workflow code imports, also here for clients; workflow code imports it from ./workflow.
export { JOB_WORKFLOW_TYPE, jobChildOptions } from './workflow';
export type { JobChildOrder, JobWorkflowInput, JobWorkflowResult } from './workflow';
