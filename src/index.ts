/** The public surface of the onejob package: the typed HTTP client and the shared vocabulary. */
export {
  IdempotencyKeyReuseError,
  InvalidJobIdentityError,
  OneJobClient,
  OneJobProblemError,
  startJob,
} from './client';
export type { StartedJob, StartJobRequest } from './client';
export type { CreateJobInput, CreatedJob, Job, OneJobClientOptions, Problem } from './client';
export { jobWorkflowId, parseJobWorkflowId } from './domain/workflowId';
export { ATTEMPT_STATES, JOB_MODES, JOB_STATUSES } from './domain/job';
export type { AttemptState, JobMode, JobStatus } from './domain/job';
