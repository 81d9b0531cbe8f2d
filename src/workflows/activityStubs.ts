/**
 * How the job workflow reaches its activities: the database steps (retried freely, since each
 * is idempotent) and the provider call (exactly one try, on its own task queue).
 */
import {
  ActivityCancellationType,
  CancellationScope,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { JobActivities, ProviderCallActivities } from '../activities';
import { NON_RETRYABLE_DB_FAILURES } from '../domain/failures';
import { providerCallTaskQueue, type PlannedProvider } from './definitions';

// Database activities are idempotent by construction, so they may retry freely, except when
// the database refused for a reason no retry changes: those come back typed, at once.
export const db = proxyActivities<JobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: [...NON_RETRYABLE_DB_FAILURES],
  },
});

/** The provider call: exactly one try, on the provider-call task queue. */
export function providerCall(provider: PlannedProvider, seq: number) {
  return proxyActivities<ProviderCallActivities>({
    taskQueue: providerCallTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: provider.timeoutMs,
    heartbeatTimeout: provider.heartbeatTimeoutMs,
    retry: { maximumAttempts: 1 },
    // A cancelled call is abandoned at once; if it still answers, its result loses the CAS.
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: `attempt ${seq} on ${provider.name}`,
  }).callProvider;
}

/** Settlement must happen even while the workflow is being cancelled. */
export const settle = <T>(step: () => Promise<T>): Promise<T> =>
  CancellationScope.nonCancellable(step);
