/**
 * How the job workflow reaches its activities: the database steps (retried freely, since each
 * is idempotent) and the provider call (exactly one try, on its own task queue).
 */
import {
  ActivityCancellationType,
  CancellationScope,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { JobActivities, ProviderCallActivities } from '../activities';
import { FINAL_FAILURES } from '../domain/failures';
import type { PlannedProvider } from './definitions';
import { providerCallTaskQueue } from './taskQueues';

// Database activities are idempotent by construction, so they may retry freely, except when
// the database refused for a reason no retry changes: those come back typed, at once.
const dbRetry = {
  initialInterval: '500 milliseconds',
  maximumInterval: '10 seconds',
  nonRetryableErrorTypes: [...FINAL_FAILURES],
};

/** Every database step as an activity task of its own (runs that began before the patch). */
export const db = proxyActivities<JobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: dbRetry,
});

/**
 * Admission as a local activity: it runs in the workflow's first task, on the worker that holds
 * the workflow, and leaves one marker in the history instead of three events and a workflow
 * task of its own. It is a few small idempotent statements, so running it again (after a
 * worker crash) is harmless, and nothing else runs in the workflow while it does (handlers wait
 * for admission), so a slow database only holds the workflow task, which Temporal heartbeats.
 * The other steps stay activity tasks: they run beside hedge timers, provider calls and update
 * handlers, and a local activity outlasting its workflow task there would hold all of those
 * (with SDK 1.24 a hedge launched meanwhile even broke replay: "Missing associated machine for
 * LocalActivity", seen in test/engines/hedging.test.ts with the attempts table locked).
 */
const local = proxyLocalActivities<Pick<JobActivities, 'admitJob'>>({
  startToCloseTimeout: '30 seconds',
  retry: dbRetry,
  // A retry that waits longer than this waits on a durable timer, the workflow task completed:
  // an admission held by an operator (retried every ONEJOB_ADMISSION_HOLD_RECHECK_MS, 30 s)
  // then neither pins its run in the worker's cache nor renews its task for the whole hold.
  // Above dbRetry's longest wait (10 s), so a history recorded before it replays the same way.
  localRetryThreshold: '20 seconds',
});

/** Which job a key names now: one read, run locally by the short workflow that asks it. */
export const keyLookup = proxyLocalActivities<Pick<JobActivities, 'findKeyJobs'>>({
  startToCloseTimeout: '30 seconds',
  retry: dbRetry,
});

/**
 * Which of a job's events wait to be sent, asked once as the job ends: a local activity, so a
 * job without webhooks pays one read and one marker, not an activity task.
 */
export const webhookLookup = proxyLocalActivities<Pick<JobActivities, 'webhookEventsWaiting'>>({
  startToCloseTimeout: '30 seconds',
  retry: dbRetry,
});

/** Patch id of local admission; runs that began without it admit through an activity task. */
export const LOCAL_ADMISSION = 'local-admission';

/** The database steps of this run: decided once, at its start, so that replay takes the same path. */
export function databaseSteps(localAdmission: boolean): typeof db {
  if (!localAdmission) return db;
  // `db` is a proxy with no keys of its own (spreading it copies nothing): wrap it instead.
  return new Proxy(db, {
    get: (steps, name, receiver) =>
      name === 'admitJob' ? local.admitJob : Reflect.get(steps, name, receiver),
  });
}

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

/** A database step that must run to its end even while the workflow is being cancelled. */
export const nonCancellable = <T>(step: () => Promise<T>): Promise<T> =>
  CancellationScope.nonCancellable(step);
