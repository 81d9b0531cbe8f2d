import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isProblemType, PROBLEM_TYPES, problemTypeUri } from '../../domain/problems';
import { type MetricsAccess, mayReadMetrics, metricsRefusal } from '../../health/metricsAccess';
import { notReadyDetail, type Readiness } from '../../health/readiness';
import { exposition } from '../../telemetry/histograms';
import type { Metrics } from '../../telemetry/metrics';
import { problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';

const dependencyCheckSchema = z.object({
  ok: z.boolean(),
  ms: z.number().int(),
  reason: z.string().optional(),
});

/** What the service says about itself: liveness, readiness, Prometheus metrics, the problem types. */
export const metaRoutes: FastifyPluginAsyncZod<{
  metrics: Pick<Metrics, 'registry'>;
  access: MetricsAccess;
  readiness: () => Promise<Readiness>;
}> = async (app, { metrics, access, readiness }) => {
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
    '/readyz',
    {
      schema: {
        summary:
          'Readiness: PostgreSQL and Temporal (its namespace) both answer; else 503 naming which did not',
        security: [],
        response: {
          200: z.object({
            ready: z.literal(true),
            checks: z.record(z.string(), dependencyCheckSchema),
          }),
          ...problemResponses(),
        },
      },
    },
    async (_request, reply) => {
      const answer = await readiness();
      const { ready, checks } = answer;
      if (ready) return { ready: true as const, checks };
      return sendProblem(reply, 'service-unavailable', notReadyDetail(answer), { checks });
    },
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
    async (request, reply) => {
      const { contentType, body } = await exposition(metrics.registry, request.headers.accept);
      return reply.type(contentType).send(body);
    },
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
      const { status, title } = PROBLEM_TYPES[type];
      return { type: problemTypeUri(type), status, title };
    },
  );
};

/** An onRequest hook for /metrics that refuses, as a 401 problem, whoever may not read it. */
function metricsGuard(access: MetricsAccess) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (mayReadMetrics(access, request.socket.remoteAddress, request.headers.authorization)) return;
    await sendProblem(
      reply,
      'unauthorized',
      metricsRefusal(access),
      {},
      { 'www-authenticate': 'Bearer' },
    );
  };
}
