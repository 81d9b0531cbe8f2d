import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Metrics } from '../metrics';
import { isProblemType, PROBLEM_TYPES, problemTypeUri, sendNotFound } from '../problems';

/** What the service says about itself: liveness, Prometheus metrics, the problem types. */
export const metaRoutes: FastifyPluginAsyncZod<{ metrics: Pick<Metrics, 'registry'> }> = async (
  app,
  { metrics },
) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  app.get(
    '/problems/:type',
    { schema: { hide: true, params: z.object({ type: z.string() }) } },
    async (request, reply) => {
      const { type } = request.params;
      if (!isProblemType(type)) return sendNotFound(reply, `problem type ${type}`);
      return { type: problemTypeUri(type), ...PROBLEM_TYPES[type] };
    },
  );
};
