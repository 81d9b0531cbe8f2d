export { jobWorkflow } from './jobWorkflow';
export { keyJobsWorkflow } from './keyJobsWorkflow';
export { webhookSenderWorkflow } from './webhookSender';
