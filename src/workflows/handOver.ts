import {
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  workflowInfo,
} from '@temporalio/workflow';
import type { JobPlan, JobWorkflowInput, JobWorkflowResult } from './definitions';
import type { JobRun } from './jobRun';
import { shouldContinueAsNew } from './policy';

/**
 * Continues-as-new when the history has grown large: a job may wait in `unknown` for months.
 * Called only while nothing runs (no provider call in flight) and no request waits for the
 * loop, after every handler has finished, so the next run starts from a complete state.
 */
export async function continueAsNewIfLarge(job: JobRun, admitted: JobPlan): Promise<void> {
  const info = workflowInfo();
  if (!shouldContinueAsNew(info, admitted)) return;
  await condition(allHandlersFinished);
  if (job.terminal || job.requests.pending()) return;
  const next = makeContinueAsNewFunc<(input: JobWorkflowInput) => Promise<JobWorkflowResult>>({
    typedSearchAttributes: info.typedSearchAttributes,
  });
  await next({ ...job.input, carried: job.snapshot(admitted) });
}
