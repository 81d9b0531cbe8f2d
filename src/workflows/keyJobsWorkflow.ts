import { keyLookup } from './activityStubs';
import type { KeyJobs, KeyJobsInput } from './definitions';

/** Reads which job a key names now (see KEY_JOBS_WORKFLOW_TYPE): one local activity, no state. */
export async function keyJobsWorkflow(input: KeyJobsInput): Promise<KeyJobs> {
  return keyLookup.findKeyJobs(input);
}
