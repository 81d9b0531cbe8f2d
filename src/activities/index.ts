import { admissionActivities } from './admission';
import { attemptActivities } from './attempts';
import { finalOnRefusal } from './failures';
import { withFallbackEligibility } from './fallbackEligibility';
import { providerCallActivities } from './providerCall';
import type { ActivityDeps } from './types';
import { verdictActivities } from './verdicts';
import { webhookActivities, webhookSendingActivities } from './webhooks';

export * from './types';

type Activity = (...args: never[]) => Promise<unknown>;

/** Every activity but the provider call: each is idempotent, so it may retry freely. */
export function createJobActivities(deps: ActivityDeps) {
  const attempts = attemptActivities(deps);
  const activities = {
    ...admissionActivities(deps),
    ...attempts,
    // Continuous certification: a fallback or hedge that lost its eligibility is passed by.
    startAttempt: withFallbackEligibility(deps, attempts.startAttempt),
    ...verdictActivities(deps),
    ...webhookActivities(deps),
  };
  // A refusal by the database (a CHECK, a bad value) is final: retrying it for ever heals nothing.
  return Object.fromEntries(
    Object.entries(activities).map(([name, activity]) => [
      name,
      finalOnRefusal(activity as Activity),
    ]),
  ) as typeof activities;
}

/** Webhook sends, on their own task queue (one instance per worker: its send slots are shared). */
export function createWebhookSendingActivities(deps: ActivityDeps) {
  return webhookSendingActivities(deps);
}

/**
 * The provider call, registered on its own task queue so it cannot starve the bookkeeping; and
 * there too, for senders recorded before the webhook queue, the webhook sends (`sending`).
 */
export function createProviderCallActivities(
  deps: ActivityDeps,
  sending: WebhookSendingActivities = createWebhookSendingActivities(deps),
) {
  return { ...providerCallActivities(deps), ...sending };
}

export type JobActivities = ReturnType<typeof createJobActivities>;
export type ProviderCallActivities = ReturnType<typeof createProviderCallActivities>;
export type WebhookSendingActivities = ReturnType<typeof webhookSendingActivities>;
