export { jobWorkflow } from './jobWorkflow';
