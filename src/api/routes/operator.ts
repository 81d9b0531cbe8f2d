import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cancelJob, resolveAttempt } from '../../service/attempts';
import type { JobEndMetrics } from '../../service/histograms';
import { releaseKey } from '../../service/keyRelease';
import { authHeaders, requireBearer } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound } from '../problems';
import { storableJson, storableText } from '../storable';

/** Why the operator acted, as recorded with the job. */
const reason = storableText(z.string().min(1).max(2000));

export interface OperatorRoutesOptions {
  /** With the metrics that observe a job an operator's verdict or cancel ends. */
  deps: Pick<
    ApiDeps,
    'pool' | 'temporal' | 'logger' | 'operatorTokens' | 'taskQueue' | 'webhookRetry'
  > & {
    metrics: JobEndMetrics;
  };
}

/**
 * Operators (under /v1/operator) settle what only a human can know, and cancel jobs: their own
 * tokens, any owner's job.
 */
export const operatorRoutes: FastifyPluginAsyncZod<OperatorRoutesOptions> = async (
  app,
  { deps },
) => {
  requireBearer(app, deps.operatorTokens, 'operator token');

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
      return cancelled ? { ...cancelled } : sendNotFound(reply, `job ${id}`);
    },
  );
};
