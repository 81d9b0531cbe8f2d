/**
 * Completion webhooks: the events a job sends its owner's endpoints, and how their delivery is
 * retried. Pure, so the workflow and the API share it (migration 0016 holds the same list).
 */

export const WEBHOOK_EVENTS = [
  'job.succeeded',
  'job.failed',
  'job.cancelled',
  'job.needs_operator',
  'job.late_result',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'abandoned'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * How a job's deliveries are retried: a try every `initialIntervalMs`, doubling up to
 * `maximumIntervalMs`, for `giveUpAfterMs` in all; then what is left is marked failed.
 */
export interface WebhookRetry {
  initialIntervalMs: number;
  maximumIntervalMs: number;
  giveUpAfterMs: number;
}

/**
 * What a delivery's key is: the ending, or the attempt it is about (one that needs an operator,
 * one whose result came after its job ended without one; migration 0018 writes those itself).
 */
export function deliveryEventKey(event: WebhookEvent, attemptId?: string): string {
  return (event === 'job.needs_operator' || event === 'job.late_result') && attemptId
    ? `${event}:${attemptId}`
    : event;
}

/** The child workflow that delivers one event of one job (its id makes a second start a no-op). */
export function webhookWorkflowId(jobId: string, eventKey: string): string {
  return `webhooks/${jobId}/${eventKey}`;
}
