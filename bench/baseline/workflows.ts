import { proxyActivities } from '@temporalio/workflow';
import type { BaselineActivities } from './activities';

/**
 * The baseline's workflows: what Temporal costs with nothing of ours on top. `emptyWorkflow` is
 * the trivial workflow the create baseline starts; `bareJobWorkflow` is a job with no guarantees
 * at all: one activity that calls the provider and writes one row.
 */
const { callProviderAndStore } = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

export async function emptyWorkflow(): Promise<void> {}

export async function bareJobWorkflow(id: string, text: string): Promise<string> {
  return callProviderAndStore(id, text);
}
