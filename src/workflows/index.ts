export { jobWorkflow } from './jobWorkflow';
export { keyJobsWorkflow } from './keyJobsWorkflow';
