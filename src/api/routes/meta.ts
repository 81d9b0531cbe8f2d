import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isProblemType, PROBLEM_TYPES } from '../../domain/problems';
import type { Metrics } from '../metrics';
import { type MetricsAccess, metricsGuard } from '../metricsAccess';
import { problemResponses } from '../openapi';
import { problemTypeUri, sendNotFound } from '../problems';

/** What the service says about itself: liveness, Prometheus metrics, the problem types. */
export const metaRoutes: FastifyPluginAsyncZod<{
  metrics: Pick<Metrics, 'registry'>;
  access: MetricsAccess;
}> = async (app, { metrics, access }) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers (it does not look at its dependencies)',
        security: [],
        response: { 200: z.object({ ok: z.literal(true) }), ...problemResponses() },
      },
    },
    async () => ({ ok: true as const }),
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary:
          'Prometheus metrics: open on loopback, else Authorization: Bearer <ONEJOB_METRICS_TOKEN>',
        security: [],
        response: { 200: z.string(), ...problemResponses(401) },
      },
      onRequest: metricsGuard(access),
    },
    async (_request, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  app.get(
    '/problems/:type',
    {
      schema: {
        summary: 'What a problem type means, and its HTTP status',
        security: [],
        params: z.object({ type: z.string() }),
        response: {
          200: z.object({ type: z.string(), status: z.number().int(), title: z.string() }),
          ...problemResponses(404),
        },
      },
    },
    async (request, reply) => {
      const { type } = request.params;
      if (!isProblemType(type)) return sendNotFound(reply, `problem type ${type}`);
      return { type: problemTypeUri(type), ...PROBLEM_TYPES[type] };
    },
  );
};
