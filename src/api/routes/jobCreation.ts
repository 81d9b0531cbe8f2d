/** POST /jobs: an owner's job made, or the one its Idempotency-Key made already. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_RULE, isValidIdempotencyKey } from '../../domain/identity';
import { JOB_MODES } from '../../domain/job';
import { jobResource, jobResourceSchema } from '../../service/jobDocument';
import { createJob } from '../../service/jobs';
import type { Metrics } from '../../telemetry/metrics';
import { tagRequestJob } from '../../telemetry/requestTracing';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendProblem } from '../problems';

const createJobBody = z.strictObject({
  type: z.string().min(1).max(100).describe('Job type, e.g. "summarize".'),
  input: z
    .record(z.string(), z.unknown())
    .describe("The job type's input; validated by its schema."),
  providers: z
    .array(z.string().min(1).max(63))
    .min(1)
    .max(10)
    .optional()
    .describe('Provider plan: the primary first, then fallbacks. Default: the service default.'),
  mode: z
    .enum(JOB_MODES)
    .optional()
    .describe('exclusive (default) or hedged (side-effect-free jobs only).'),
});

/** Creates a job (under jobRoutes, which authenticates it). */
export const jobCreationRoute: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'temporal' | 'taskQueue' | 'providers' | 'logger' | 'ownerLimits'>;
  metrics: Pick<Metrics, 'jobsCreated' | 'jobsReplayed'>;
}> = async (app, { deps, metrics }) => {
  app.post(
    '/jobs',
    {
      schema: {
        summary: 'Create a job, or get the job this Idempotency-Key already made',
        headers: authHeaders.extend({
          'idempotency-key': z
            .string()
            .optional()
            .describe(
              `${IDEMPOTENCY_KEY_RULE}, chosen by the client per intent. Keys are kept for ever: the same key always answers with its job, unless an operator released the key of an ended job (recorded on it), after which the key makes a new job.`,
            ),
        }),
        body: createJobBody,
        response: {
          201: jobResourceSchema,
          200: jobResourceSchema,
          ...problemResponses(401, 402, 409, 429, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (key === undefined) {
        return sendProblem(
          reply,
          'idempotency-key-missing',
          'Send an Idempotency-Key header that identifies this intent.',
        );
      }
      if (!isValidIdempotencyKey(key)) {
        return sendProblem(
          reply,
          'idempotency-key-invalid',
          `The Idempotency-Key must be ${IDEMPOTENCY_KEY_RULE}.`,
        );
      }
      const { job, created } = await createJob(deps, {
        ownerId: request.ownerId,
        idempotencyKey: key,
        ...request.body,
      });
      tagRequestJob(job.id);
      (created ? metrics.jobsCreated : metrics.jobsReplayed).inc({ type: job.type });
      reply.header('location', `/v1/jobs/${job.id}`);
      if (!created) reply.header('idempotent-replayed', 'true');
      return reply.code(created ? 201 : 200).send(jobResource(job));
    },
  );
};
