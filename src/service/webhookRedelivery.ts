/**
 * Sending webhook events again (issue 61): one event, or every undelivered one of an endpoint
 * since a time, by the endpoint's owner or by an operator. Each is a new delivery with the first
 * one's webhook-id and bytes (receivers de-duplicate by the id), handed to the event's sender;
 * the endpoint's breaker hold ends, so the first of them is a probe at once.
 */
import {
  deliveryToEndpoint,
  endpointToRedeliverTo,
  probeEndpointNow,
  writeRedeliveries,
  type Redelivery,
  type RedeliverySelection,
} from '../db/webhookRedeliveries';
import { isUuid } from '../domain/identity';
import { concurrently } from './concurrently';
import { ServiceError } from './errors';
import { startEventSenders, type SenderStartDeps } from './webhookSenders';

/** How many jobs' senders are started at once. */
const SENDER_STARTS_AT_ONCE = 16;

/** At most this many events are sent again per request; `more` says when others are left. */
export const MAX_REDELIVERIES = 500;

export interface RedeliveryAnswer {
  redelivered: Redelivery[];
  /** The bound was reached: failed deliveries may be left; asking again sends them (or none). */
  more: boolean;
}

/**
 * Sends again what `selection` names to one endpoint; undefined when there is no such endpoint
 * (of this owner, when `ownerId` is given) or no such delivery to it. Who asked (`owner:<id>` or
 * `operator:<name>`) and why are kept on each new delivery.
 */
export async function redeliverWebhooks(
  deps: SenderStartDeps,
  request: {
    endpointId: string;
    ownerId?: string;
    selection: RedeliverySelection;
    by: string;
    reason: string;
  },
): Promise<RedeliveryAnswer | undefined> {
  if (!isUuid(request.endpointId)) return undefined;
  const endpoint = await endpointToRedeliverTo(deps.pool, request.endpointId, request.ownerId);
  if (!endpoint) return undefined;
  if (endpoint.disabledReason !== null)
    throw new ServiceError(
      'endpoint-disabled',
      `endpoint ${request.endpointId} is disabled (${endpoint.disabledReason}): enable it first, then ask again`,
    );
  if ('deliveryId' in request.selection) {
    const { deliveryId } = request.selection;
    const delivery = isUuid(deliveryId)
      ? await deliveryToEndpoint(deps.pool, request.endpointId, deliveryId)
      : undefined;
    if (!delivery) return undefined;
    if (delivery.state === 'pending' || delivery.waitingAgain)
      throw new ServiceError(
        'delivery-pending',
        `delivery ${deliveryId} is still being sent, or a redelivery of it waits: it will be tried until it ends`,
      );
  }
  const redelivered = await writeRedeliveries(deps.pool, { ...request, limit: MAX_REDELIVERIES });
  if (redelivered.length > 0) await probeEndpointNow(deps.pool, request.endpointId);
  // Each job's senders are a workflow start or two: many jobs' are started side by side.
  const jobs = [...new Set(redelivered.map((r) => r.jobId))];
  await concurrently(jobs, SENDER_STARTS_AT_ONCE, async (jobId) => {
    await startEventSenders(deps, jobId);
  });
  return { redelivered, more: redelivered.length === MAX_REDELIVERIES };
}
