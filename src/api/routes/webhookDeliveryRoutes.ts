/** GET /jobs/:id/webhook-deliveries: a job's deliveries and their tries, as its owner reads them. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findOwnedJob } from '../../db/jobs';
import { deliveriesOfJob, type DeliveryRecord } from '../../db/webhookDeliveries';
import { isUuid } from '../../domain/identity';
import { DELIVERY_STATES, WEBHOOK_EVENTS } from '../../domain/webhooks';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import { pageQuery } from './webhookSchemas';

const deliverySchema = z.object({
  id: z.uuid(),
  webhookId: z
    .uuid()
    .describe(
      'Sent as webhook-id, the same on every try: the delivery’s id, or for a redelivery the first delivery’s.',
    ),
  endpointId: z.uuid(),
  url: z.string(),
  event: z.enum(WEBHOOK_EVENTS),
  state: z.enum(DELIVERY_STATES),
  tries: z.array(
    z.object({
      n: z.number().int(),
      at: z.string(),
      status: z.number().int().nullable().describe("The receiver's HTTP status; null: no answer."),
      error: z.string().nullable(),
      durationMs: z.number().int(),
    }),
  ),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
});

function deliveryResource(delivery: DeliveryRecord): z.infer<typeof deliverySchema> {
  return {
    ...delivery,
    tries: delivery.tries.map((t) => ({ ...t, at: t.at.toISOString() })),
    createdAt: delivery.createdAt.toISOString(),
    endedAt: delivery.endedAt?.toISOString() ?? null,
  };
}

/** A cursor into a job's deliveries: the position of the last one of the page before. */
const encodePositionCursor = (position: number): string =>
  Buffer.from(`d.${position}`, 'utf8').toString('base64url');

function decodePositionCursor(text: string): number | undefined {
  const match = /^d\.(\d{1,15})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** A job's deliveries (under webhookRoutes, which authenticates and meters it). */
export const webhookDeliveryRoutes: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool'>;
}> = async (app, { deps }) => {
  app.get(
    '/jobs/:id/webhook-deliveries',
    {
      schema: {
        summary:
          "A job's webhook deliveries, in the order they are sent, with every try, a page at a time",
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        querystring: pageQuery,
        response: {
          200: z.object({ deliveries: z.array(deliverySchema), nextCursor: z.string().nullable() }),
          ...problemResponses(401, 429, 404),
        },
      },
    },
    async (request, reply) => {
      const given = request.params.id;
      const job = isUuid(given)
        ? await findOwnedJob(deps.pool, request.ownerId, given.toLowerCase())
        : undefined;
      if (!job) return sendNotFound(reply, `job ${request.params.id}`);
      const { limit, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodePositionCursor(cursor);
      if (cursor !== undefined && after === undefined)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const page = await deliveriesOfJob(deps.pool, job.id, { limit, afterPosition: after });
      return {
        deliveries: page.deliveries.map(deliveryResource),
        nextCursor:
          page.nextPosition === undefined ? null : encodePositionCursor(page.nextPosition),
      };
    },
  );
};
