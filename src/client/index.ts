export { OneJobClient, OneJobProblemError } from './http';
export type {
  CreateJobInput,
  CreatedJob,
  Job,
  ListedJob,
  OneJobClientOptions,
  Problem,
} from './http';
export { IdempotencyKeyReuseError, InvalidJobIdentityError, startJob } from './temporal';
export type { StartedJob, StartJobRequest } from './temporal';
