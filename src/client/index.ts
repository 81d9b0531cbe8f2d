export { OneJobClient, OneJobProblemError } from './http';
export type { CreateJobInput, CreatedJob, Job, OneJobClientOptions, Problem } from './http';
