/**
 * A deliberately incompatible change to the job workflow, for the replay test to catch: it waits
 * on a timer before doing what the recorded histories show it doing first (admitting the job).
 * Never bundled into the worker.
 */
import { sleep } from '@temporalio/workflow';
import type { JobWorkflowInput, JobWorkflowResult } from '../../src/workflows/definitions';
import { jobWorkflow as recorded } from '../../src/workflows/jobWorkflow';

export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  await sleep('1 second');
  return recorded(input);
}
