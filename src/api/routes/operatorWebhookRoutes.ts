/** What operators see and do of any owner's webhook endpoints, and the trail of what they did. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  listAllEndpoints,
  listOperatorWebhookActions,
  OPERATOR_WEBHOOK_ACTIONS,
  type OperatorEndpoint,
  type OperatorWebhookAction,
} from '../../db/webhookOperator';
import { WEBHOOK_EVENTS } from '../../domain/webhooks';
import { decodeCursor, encodeCursor } from '../../service/jobDocument';
import { operatorWebhookAction } from '../../service/operatorWebhooks';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import { storableText } from '../storable';
import { reason } from './operatorReason';
import { breakerResource, breakerSchema, pageQuery } from './webhookSchemas';

/** Any owner's endpoint as operators read it: whose it is, and never its secrets. */
const operatorEndpointSchema = z.object({
  id: z.uuid(),
  ownerId: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  description: z.string().nullable(),
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable(),
  disabledByOperator: z
    .boolean()
    .describe('An operator disabled it: its owner cannot enable it, an operator can.'),
  createdAt: z.string(),
  deletedAt: z
    .string()
    .nullable()
    .describe('Set by a delete (only its answer shows one): gone for its owner and operators.'),
});

function operatorEndpointResource(
  endpoint: OperatorEndpoint,
): z.infer<typeof operatorEndpointSchema> {
  return {
    id: endpoint.id,
    ownerId: endpoint.ownerId,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    disabledAt: endpoint.disabledAt?.toISOString() ?? null,
    disabledReason: endpoint.disabledReason,
    disabledByOperator: endpoint.disabledByOperator,
    createdAt: endpoint.createdAt.toISOString(),
    deletedAt: endpoint.deletedAt?.toISOString() ?? null,
  };
}

/** A cursor into the trail: the id of the last record of the page before. */
const encodeActionCursor = (id: string): string =>
  Buffer.from(`a.${id}`, 'utf8').toString('base64url');

function decodeActionCursor(text: string): string | undefined {
  return /^a\.(\d{1,18})$/.exec(Buffer.from(text, 'base64url').toString('utf8'))?.[1];
}

/** The operator's webhook routes (under operatorRoutes, which authenticates them). */
export const operatorWebhookRoutes: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'logger'>;
}> = async (app, { deps }) => {
  app.get(
    '/webhooks',
    {
      schema: {
        summary:
          "Every owner's webhook endpoints (or one owner's), oldest first, a page at a time, never with their secrets",
        headers: authHeaders,
        querystring: pageQuery.extend({
          owner: storableText(z.string().max(200)).optional().describe('only this owner'),
        }),
        response: {
          200: z.object({
            endpoints: z.array(operatorEndpointSchema.extend({ breaker: breakerSchema })),
            nextCursor: z.string().nullable(),
          }),
          ...problemResponses(401),
        },
      },
    },
    async (request, reply) => {
      const { limit, cursor, owner } = request.query;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (cursor !== undefined && !after)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const page = await listAllEndpoints(deps.pool, { ownerId: owner, limit, after });
      return {
        endpoints: page.endpoints.map((endpoint) => ({
          ...operatorEndpointResource(endpoint),
          breaker: breakerResource(endpoint.breaker),
        })),
        nextCursor: page.next ? encodeCursor(page.next) : null,
      };
    },
  );

  const endpointAction = (action: OperatorWebhookAction, summary: string): void => {
    app.post(
      `/webhooks/:id/${action}`,
      {
        schema: {
          summary,
          headers: authHeaders,
          params: z.object({ id: z.string().max(100) }),
          body: z.strictObject({ reason }),
          response: {
            200: operatorEndpointSchema,
            ...problemResponses(401, 404, ...BODY_ERRORS),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const endpoint = await operatorWebhookAction(
          deps,
          request.ownerId,
          action,
          id,
          request.body.reason,
        );
        if (!endpoint) return sendNotFound(reply, `webhook endpoint ${id}`);
        return operatorEndpointResource(endpoint);
      },
    );
  };
  endpointAction(
    'disable',
    "Disable any owner's endpoint: nothing more is sent to it, what waited is abandoned, and only an operator can enable it again; recorded with your name and reason",
  );
  endpointAction(
    'enable',
    'Enable an endpoint again (whoever disabled it): later events go to it; recorded with your name and reason',
  );
  endpointAction(
    'delete',
    "Delete any owner's endpoint: nothing more is sent to it, what waited is abandoned; recorded with your name and reason",
  );

  app.get(
    '/webhook-actions',
    {
      schema: {
        summary:
          'What operators did to webhook endpoints (who, what, which endpoint of which owner, why, when), newest first, a page at a time',
        headers: authHeaders,
        querystring: pageQuery.extend({
          endpoint: z.string().max(100).optional().describe('only this endpoint'),
          owner: storableText(z.string().max(200))
            .optional()
            .describe("only this owner's endpoints"),
        }),
        response: {
          200: z.object({
            actions: z.array(
              z.object({
                id: z.string(),
                at: z.string(),
                operator: z.string(),
                action: z.enum(OPERATOR_WEBHOOK_ACTIONS),
                endpointId: z.uuid(),
                ownerId: z.string(),
                reason: z.string(),
              }),
            ),
            nextCursor: z.string().nullable(),
          }),
          ...problemResponses(401),
        },
      },
    },
    async (request, reply) => {
      const { limit, cursor, endpoint, owner } = request.query;
      const before = cursor === undefined ? undefined : decodeActionCursor(cursor);
      if (cursor !== undefined && before === undefined)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const page = await listOperatorWebhookActions(deps.pool, {
        endpointId: endpoint,
        ownerId: owner,
        limit,
        before,
      });
      return {
        actions: page.records.map((record) => ({ ...record, at: record.at.toISOString() })),
        nextCursor: page.nextBefore === undefined ? null : encodeActionCursor(page.nextBefore),
      };
    },
  );
};
