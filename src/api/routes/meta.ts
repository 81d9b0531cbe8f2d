import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Metrics } from '../metrics';
import { type MetricsAccess, metricsGuard } from '../metricsAccess';
import { isProblemType, PROBLEM_TYPES, problemTypeUri, sendNotFound } from '../problems';

/** What the service says about itself: liveness, Prometheus metrics, the problem types. */
export const metaRoutes: FastifyPluginAsyncZod<{
  metrics: Pick<Metrics, 'registry'>;
  access: MetricsAccess;
}> = async (app, { metrics, access }) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  app.get(
    '/metrics',
    { schema: { hide: true }, onRequest: metricsGuard(access) },
    async (_request, reply) =>
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
