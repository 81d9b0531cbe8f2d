/** What operators do to any owner's jobs: settle an unknown attempt, release a key, cancel. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cancelJob, resolveAttempt } from '../../service/attempts';
import { releaseKey } from '../../service/keyRelease';
import type { JobEndMetrics } from '../../telemetry/histograms';
import { tagRequestJob } from '../../telemetry/requestTracing';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound } from '../problems';
import { storableJson, storableText } from '../storable';
import { reason } from './operatorReason';

/** The operator's job routes (under operatorRoutes, which authenticates them). */
export const operatorJobRoutes: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'temporal' | 'logger' | 'taskQueue' | 'webhookRetry'> & {
    metrics: JobEndMetrics;
  };
}> = async (app, { deps }) => {
  app.post(
    '/attempts/:attemptId/resolve',
    {
      schema: {
        summary:
          'Settle an unknown attempt: failed (with a reason) or succeeded (with its result, through the CAS)',
        headers: authHeaders,
        params: z.object({ attemptId: storableText(z.string().max(100)) }),
        body: z.discriminatedUnion('outcome', [
          z.strictObject({ outcome: z.literal('failed'), reason }),
          z.strictObject({
            outcome: z.literal('succeeded'),
            reason,
            result: storableJson,
          }),
        ]),
        response: {
          200: z.object({
            attemptId: z.string(),
            state: z.string(),
            held: z
              .literal(true)
              .optional()
              .describe(
                'A `failed` given while the call may still land: held on the attempt, which stays unknown until the call is over (then it settles failed), unless the call answers success first',
              ),
          }),
          ...problemResponses(401, 404, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { attemptId } = request.params;
      const resolved = await resolveAttempt(deps, request.ownerId, attemptId, request.body);
      return resolved ?? sendNotFound(reply, `attempt ${attemptId}`);
    },
  );

  app.post(
    '/jobs/:id/release-key',
    {
      schema: {
        summary:
          "Release an ended job's Idempotency-Key: the next create with it makes a new job, linked to this one",
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        body: z.strictObject({ reason }),
        response: {
          200: z.object({
            jobId: z.string(),
            keyGeneration: z.number().int(),
            keyRelease: z.object({ operator: z.string(), reason: z.string(), at: z.string() }),
          }),
          ...problemResponses(401, 404, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const released = await releaseKey(deps, request.ownerId, id, request.body.reason);
      if (!released?.keyRelease) return sendNotFound(reply, `job ${id}`);
      tagRequestJob(released.id);
      return {
        jobId: released.id,
        keyGeneration: released.keyGeneration,
        keyRelease: released.keyRelease,
      };
    },
  );

  app.post(
    '/jobs/:id/cancel',
    {
      schema: {
        summary: 'Cancel a job; results that still arrive are discarded and logged',
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        body: z.strictObject({ reason }),
        response: {
          200: z.object({ jobId: z.string(), status: z.string() }).loose(),
          ...problemResponses(401, 404, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const cancelled = await cancelJob(deps, id, {
        operator: request.ownerId,
        reason: request.body.reason,
      });
      if (!cancelled) return sendNotFound(reply, `job ${id}`);
      tagRequestJob(id);
      return { ...cancelled };
    },
  );
};
