/**
 * The task queues beside a job's own, named after it: a worker polls them, the workflow sends
 * its provider calls and webhook sends there.
 */

/**
 * Provider calls run on a task queue of their own, next to the job's, with their own slots: a
 * thousand hanging calls cannot keep a job from being admitted, or an attempt from settling.
 */
export function providerCallTaskQueue(jobTaskQueue: string): string {
  return `${jobTaskQueue}-calls`;
}

/**
 * The task queue of webhook sends, apart from provider calls: a receiver that never answers
 * holds a webhook slot, never a provider call's (issue 55, N2).
 */
export function webhookTaskQueue(jobTaskQueue: string): string {
  return `${jobTaskQueue}-webhooks`;
}
