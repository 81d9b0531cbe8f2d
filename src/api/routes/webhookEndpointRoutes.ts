/** An owner's registered endpoints: listed, read, deleted, and enabled again. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  deleteEndpoint,
  enableEndpoint,
  findEndpoint,
  listEndpoints,
} from '../../db/webhookEndpoints';
import { decodeCursor, encodeCursor } from '../../service/jobDocument';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import {
  endpointParams,
  endpointResource,
  endpointSchema,
  endpointWithBreakerResource,
  endpointWithBreakerSchema,
  pageQuery,
} from './webhookSchemas';

/** The routes of endpoints already registered (under webhookRoutes, which authenticates them). */
export const webhookEndpointRoutes: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool'>;
}> = async (app, { deps }) => {
  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'Your webhook endpoints, oldest first, a page at a time',
        headers: authHeaders,
        querystring: pageQuery,
        response: {
          200: z.object({
            endpoints: z.array(endpointWithBreakerSchema),
            nextCursor: z.string().nullable(),
          }),
          ...problemResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (cursor !== undefined && !after)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const page = await listEndpoints(deps.pool, request.ownerId, { limit, after });
      return {
        endpoints: page.endpoints.map(endpointWithBreakerResource),
        nextCursor: page.next ? encodeCursor(page.next) : null,
      };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        summary: 'One of your webhook endpoints',
        headers: authHeaders,
        params: endpointParams,
        response: { 200: endpointWithBreakerSchema, ...problemResponses(401, 429, 404) },
      },
    },
    async (request, reply) => {
      const endpoint = await findEndpoint(deps.pool, request.ownerId, request.params.id);
      if (!endpoint) return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      return endpointWithBreakerResource(endpoint);
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        summary: 'Delete a webhook endpoint: nothing more is sent to it; what waited is abandoned',
        headers: authHeaders,
        params: endpointParams,
        response: { 204: z.void().describe('Deleted.'), ...problemResponses(401, 429, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteEndpoint(deps.pool, request.ownerId, request.params.id)))
        return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      return reply.code(204).send();
    },
  );

  app.post(
    '/webhooks/:id/enable',
    {
      schema: {
        summary:
          'Turn an endpoint on again after a 410 disabled it: later events go to it (not one an operator disabled)',
        headers: authHeaders,
        params: endpointParams,
        response: { 200: endpointSchema, ...problemResponses(401, 429, 404, 409) },
      },
    },
    async (request, reply) => {
      const endpoint = await enableEndpoint(deps.pool, request.ownerId, request.params.id);
      if (!endpoint) return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      if (endpoint === 'operator-disabled')
        return sendProblem(
          reply,
          'endpoint-disabled-by-operator',
          `An operator disabled webhook endpoint ${request.params.id}; ask the service's operators to enable it. Nothing was changed.`,
        );
      return endpointResource(endpoint);
    },
  );
};
