import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { insertNeedsOperatorDeliveries, pendingEventKeys } from '../db/webhookDeliveries';
import { failDeliveriesWrittenBefore, failPendingDeliveries } from '../db/webhookDeliveryTries';
import { deliveryEventKey, nextRoundDelayMs, type WebhookRetry } from '../domain/webhooks';
import { deliverJobWebhooks } from '../service/webhookDelivery';
import { WebhookNames } from '../service/webhookNames';
import { WebhookSendSlots } from '../service/webhookSendSlots';
import type { ActivityDeps } from './types';

/** The job workflow's webhook steps: what waits to be sent, and an operator's call. */
export function webhookActivities(deps: Pick<ActivityDeps, 'pool' | 'webhookRetry'>) {
  return {
    /** The events of a job still waiting to be sent (its ending's, written with the ending). */
    async webhookEventsWaiting(input: {
      jobId: string;
    }): Promise<{ eventKeys: string[]; retry: WebhookRetry }> {
      return {
        eventKeys: await pendingEventKeys(deps.pool, input.jobId),
        retry: deps.webhookRetry,
      };
    },

    /** `job.needs_operator` for an attempt left unknown: its deliveries, once per endpoint. */
    async raiseNeedsOperator(input: {
      jobId: string;
      attemptId: string;
    }): Promise<{ eventKey: string | null; retry: WebhookRetry }> {
      const eventKey = deliveryEventKey('job.needs_operator', input.attemptId);
      const waiting = await insertNeedsOperatorDeliveries(deps.pool, input.jobId, eventKey);
      return { eventKey: waiting ? eventKey : null, retry: deps.webhookRetry };
    },

    /** The sender gave up on an event: what still waits of it is marked failed. */
    async giveUpWebhooks(input: {
      jobId: string;
      eventKey: string;
      reason: string;
    }): Promise<number> {
      return failPendingDeliveries(deps.pool, input.jobId, input.eventKey, input.reason);
    },

    /**
     * The sender gave up on an event: what was written before it began is marked failed; what
     * was written since (a redelivery that joined it) still waits, for a sender of its own.
     */
    async giveUpEarlierWebhooks(input: {
      jobId: string;
      eventKey: string;
      senderStartedAt: number;
      reason: string;
    }): Promise<{ failed: number; stillWaiting: number }> {
      return failDeliveriesWrittenBefore(
        deps.pool,
        input,
        new Date(input.senderStartedAt),
        input.reason,
      );
    },
  };
}

/**
 * The sending itself, on the network-bound task queue: one round over the job's waiting
 * deliveries. While any of this event's still waits, the round fails (retryably), and
 * Temporal's retry policy is the backoff between rounds; each try is recorded in its row.
 */
export function webhookSendingActivities(
  deps: Pick<
    ActivityDeps,
    | 'pool'
    | 'logger'
    | 'allowInternalWebhookTargets'
    | 'allowedWebhookTargets'
    | 'allowPlainHttpWebhooks'
    | 'webhookSends'
    | 'secretKeys'
    | 'webhookNames'
    | 'webhookRetry'
    | 'webhookBreaker'
  >,
) {
  const retry = deps.webhookRetry;
  const sending = {
    ...deps,
    breaker: deps.webhookBreaker,
    names: new WebhookNames(deps.webhookNames),
    allowInternal: deps.allowInternalWebhookTargets ?? false,
    ...(deps.allowedWebhookTargets ? { allowedTargets: deps.allowedWebhookTargets } : {}),
    allowPlainHttp: deps.allowPlainHttpWebhooks ?? false,
    slots: new WebhookSendSlots(deps.webhookSends.perProcess, deps.webhookSends.perOwner),
  };
  return {
    async deliverWebhooks(input: { jobId: string; eventKey: string }): Promise<number> {
      const round = await deliverJobWebhooks(sending, input.jobId);
      // The next round comes after a jittered backoff, and not before a held endpoint's hold.
      const again = (message: string, type: string) =>
        ApplicationFailure.create({
          message,
          type,
          nextRetryDelay: nextRoundDelayMs(
            Context.current().info.attempt,
            retry,
            round.heldUntil && round.heldUntil.getTime() - Date.now(),
            Math.random(),
          ),
        });
      if (round.noSlot)
        throw again(
          `${input.eventKey} of job ${input.jobId} waits: its owner's webhook tries on this worker are at their bound (ONEJOB_WEBHOOK_SENDS_PER_OWNER)`,
          'WebhookSendSlotsBusy',
        );
      const left = await pendingEventKeys(deps.pool, input.jobId);
      if (left.includes(input.eventKey))
        throw again(
          `${input.eventKey} of job ${input.jobId} still waits: ${round.lastError ?? 'queued behind an earlier event, or being sent by another round'}`,
          'WebhookDeliveryWaiting',
        );
      return round.delivered;
    },
  };
}
