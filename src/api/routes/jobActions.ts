/** What an owner may do to a job it has: ask for another attempt, or cancel it. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cancelJob, requestAttempt } from '../../service/attempts';
import { jobResource, jobResourceSchema } from '../../service/jobDocument';
import { getJob } from '../../service/jobs';
import type { JobEndMetrics } from '../../telemetry/histograms';
import { tagRequestJob } from '../../telemetry/requestTracing';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound } from '../problems';
import { storableText } from '../storable';

/**
 * A body the caller may leave out. Fastify hands a missing body to the schema as null, so null
 * stands for "none" (a JSON `null` body means the same).
 */
const optionalBody = <T extends z.ZodType>(schema: T) => schema.nullish();

const attemptSummarySchema = z.object({
  attemptId: z.string(),
  seq: z.number().int(),
  provider: z.string(),
  state: z.string(),
});

/** A job's new attempt and its cancel (under jobRoutes, which authenticates them). */
export const jobActionRoutes: FastifyPluginAsyncZod<{
  deps: Pick<
    ApiDeps,
    'pool' | 'temporal' | 'taskQueue' | 'providers' | 'logger' | 'ownerLimits' | 'webhookRetry'
  >;
  /** The metrics that observe a job its owner's cancel ends. */
  metrics: JobEndMetrics;
}> = async (app, { deps, metrics }) => {
  app.post(
    '/jobs/:id/attempts',
    {
      schema: {
        summary: 'Try again, or use the fallback: a new attempt under the same job',
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        body: optionalBody(z.strictObject({ provider: z.string().min(1).max(63).optional() })),
        response: {
          202: attemptSummarySchema,
          ...problemResponses(401, 404, 409, 422, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const attempt = await requestAttempt(
        deps,
        request.ownerId,
        request.params.id,
        request.body?.provider,
      );
      if (!attempt) return sendNotFound(reply, `job ${request.params.id}`);
      tagRequestJob(request.params.id);
      return reply.code(202).header('location', `/v1/jobs/${request.params.id}`).send(attempt);
    },
  );

  app.post(
    '/jobs/:id/cancel',
    {
      schema: {
        summary:
          'Cancel your job: a running attempt is abandoned (its outcome still reconciled); a result already recorded stands (409, with the status it ended in)',
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        body: optionalBody(
          z.strictObject({
            reason: storableText(z.string().min(1).max(2000))
              .optional()
              .describe('Why, as recorded with the job. Default: "cancelled by its owner".'),
          }),
        ),
        response: { 200: jobResourceSchema, ...problemResponses(401, 404, 409, ...BODY_ERRORS) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const cancelled = await cancelJob({ ...deps, metrics }, id, {
        owner: request.ownerId,
        reason: request.body?.reason ?? 'cancelled by its owner',
      });
      const found = cancelled && (await getJob(deps, request.ownerId, id));
      if (!found) return sendNotFound(reply, `job ${id}`);
      tagRequestJob(found.job.id);
      return jobResource(found.job, found.attempts);
    },
  );
};
