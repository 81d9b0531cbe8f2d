/** The shapes of an owner's webhook endpoints in the API, shared by its routes and the operator's. */
import { z } from 'zod';
import type {
  EndpointBreaker,
  WebhookEndpoint,
  WebhookEndpointWithBreaker,
} from '../../db/webhookEndpoints';
import { WEBHOOK_EVENTS } from '../../domain/webhooks';

export const endpointSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  description: z.string().nullable(),
  /** Set when nothing is sent to it: the receiver answered 410 Gone, or an operator disabled it. */
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable(),
  createdAt: z.string(),
});

/** An endpoint's breaker, shared with the operator's list. */
export const breakerSchema = z
  .object({
    state: z
      .enum(['closed', 'open', 'half_open'])
      .describe(
        'closed: tries go as events come; open: nothing is sent before heldUntil; half_open: the hold is over, the next try is a probe',
      ),
    failuresInARow: z
      .number()
      .int()
      .describe('Tries in a row not answered 2xx; a 2xx sets it back to 0'),
    heldUntil: z.string().nullable().describe('When the last hold ends (or ended)'),
    reason: z.string().nullable().describe('Why it was held'),
  })
  .describe(
    "The endpoint's circuit breaker: a receiver that keeps failing costs a probe, not a try per event",
  );

/** An endpoint's breaker as the API shows it. */
export function breakerResource(breaker: EndpointBreaker): z.infer<typeof breakerSchema> {
  return { ...breaker, heldUntil: breaker.heldUntil?.toISOString() ?? null };
}

export const endpointWithBreakerSchema = endpointSchema.extend({ breaker: breakerSchema });

export function endpointWithBreakerResource(
  endpoint: WebhookEndpointWithBreaker,
): z.infer<typeof endpointWithBreakerSchema> {
  return { ...endpointResource(endpoint), breaker: breakerResource(endpoint.breaker) };
}

export function endpointResource(endpoint: WebhookEndpoint): z.infer<typeof endpointSchema> {
  return {
    ...endpoint,
    disabledAt: endpoint.disabledAt?.toISOString() ?? null,
    createdAt: endpoint.createdAt.toISOString(),
  };
}

export const endpointParams = z.object({ id: z.string().max(100) });

/** A page of a list: how many, and where the previous page said the next starts. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
});
