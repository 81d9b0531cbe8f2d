import { admissionActivities } from './admission';
import { attemptActivities } from './attempts';
import { finalOnRefusal } from './failures';
import { providerCallActivities } from './providerCall';
import type { ActivityDeps } from './types';
import { verdictActivities } from './verdicts';
import { webhookActivities, webhookSendingActivities } from './webhooks';

export * from './types';

type Activity = (...args: never[]) => Promise<unknown>;

/** Every activity but the provider call: each is idempotent, so it may retry freely. */
export function createJobActivities(deps: ActivityDeps) {
  const activities = {
    ...admissionActivities(deps),
    ...attemptActivities(deps),
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

/**
 * The provider call, registered on its own task queue so it cannot starve the bookkeeping, and
 * the other work that waits on someone else's server there: webhook deliveries.
 */
export function createProviderCallActivities(deps: ActivityDeps) {
  return { ...providerCallActivities(deps), ...webhookSendingActivities(deps) };
}

export type JobActivities = ReturnType<typeof createJobActivities>;
export type ProviderCallActivities = ReturnType<typeof createProviderCallActivities>;
