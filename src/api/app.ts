import Fastify, { type FastifyError } from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Logger } from '../logger';
import { ServiceError } from '../service/errors';
import { createJob, getJob, type JobServiceDeps } from '../service/jobs';
import { JOB_MODES } from '../domain/job';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/workflowId';
import type { ApiTokens } from './auth';
import { isProblemType, PROBLEM_TYPES, sendProblem } from './problems';
import { jobResource } from './representation';

declare module 'fastify' {
  interface FastifyRequest {
    ownerId: string;
  }
}

export interface ApiDeps extends JobServiceDeps {
  tokens: ApiTokens;
  logger: Logger;
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
}

const IDEMPOTENCY_KEY = new RegExp(`^[\\x20-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);
const MAX_WAIT_SECONDS = 60;

const createJobBody = z.strictObject({
  type: z.string().min(1).max(100),
  input: z.record(z.string(), z.unknown()),
  providers: z.array(z.string().min(1).max(63)).min(1).max(10).optional(),
  mode: z.enum(JOB_MODES).optional(),
});

export async function buildApi(deps: ApiDeps) {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      return sendProblem(reply, 'validation-error', 'Some fields are missing or invalid.', {
        errors: error.validation.map((issue) => ({
          path: [error.validationContext, ...issue.instancePath.split('/').filter(Boolean)].join(
            '.',
          ),
          message: issue.message,
        })),
      });
    }
    if (error instanceof ServiceError) {
      const type = isProblemType(error.problemType) ? error.problemType : 'internal';
      const headers: Record<string, string> =
        type === 'idempotency-key-reuse' ? { 'x-should-retry': 'false' } : {};
      return sendProblem(reply, type, error.message, error.details, headers);
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(
          reply,
          'body-too-large',
          `The body exceeds ${app.initialConfig.bodyLimit} bytes.`,
        );
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(
          reply,
          'unsupported-media-type',
          'Only application/json bodies are accepted.',
        );
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendProblem(reply, 'malformed-body', error.message);
    }
    if (error instanceof SyntaxError) return sendProblem(reply, 'malformed-body', error.message);
    request.log.error({ err: error }, 'request failed');
    return sendProblem(
      reply,
      'internal',
      'Something went wrong on our side; retrying with the same Idempotency-Key is safe.',
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 'not-found', `No route ${request.method} ${request.url}.`),
  );

  app.get('/healthz', async () => ({ ok: true }));

  app.get(
    '/problems/:type',
    { schema: { params: z.object({ type: z.string() }) } },
    async (request, reply) => {
      const { type } = request.params;
      if (!isProblemType(type)) return sendProblem(reply, 'not-found', `No problem type ${type}.`);
      return { type: `/problems/${type}`, ...PROBLEM_TYPES[type] };
    },
  );

  // Everything under /v1 needs an owner, and the owner comes only from the token.
  await app.register(
    async (v1) => {
      v1.decorateRequest('ownerId', '');
      v1.addHook('onRequest', async (request, reply) => {
        const ownerId = deps.tokens.ownerFromHeader(request.headers.authorization);
        if (!ownerId) {
          return sendProblem(
            reply,
            'unauthorized',
            'Send Authorization: Bearer <token>.',
            {},
            { 'www-authenticate': 'Bearer' },
          );
        }
        request.ownerId = ownerId;
      });

      v1.withTypeProvider<ZodTypeProvider>().post(
        '/jobs',
        { schema: { body: createJobBody } },
        async (request, reply) => {
          const key = request.headers['idempotency-key'];
          if (key === undefined)
            return sendProblem(
              reply,
              'idempotency-key-missing',
              'Send an Idempotency-Key header that identifies this intent.',
            );
          if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
            return sendProblem(
              reply,
              'idempotency-key-invalid',
              `The Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters.`,
            );
          }
          const { job, created } = await createJob(deps, {
            ownerId: request.ownerId,
            idempotencyKey: key,
            ...request.body,
          });
          const found = await getJob(deps, request.ownerId, job.id);
          const resource = jobResource(found?.job ?? job, found?.attempts);
          reply.header('location', `/v1/jobs/${job.id}`);
          if (!created) reply.header('idempotent-replayed', 'true');
          return reply.code(created ? 201 : 200).send(resource);
        },
      );

      v1.withTypeProvider<ZodTypeProvider>().get(
        '/jobs/:id',
        {
          schema: {
            params: z.object({ id: z.string() }),
            querystring: z.object({
              wait: z.coerce.number().min(0).max(MAX_WAIT_SECONDS).optional(),
            }),
          },
        },
        async (request, reply) => {
          const found = await getJob(deps, request.ownerId, request.params.id, {
            waitMs: (request.query.wait ?? 0) * 1000,
          });
          if (!found) return sendProblem(reply, 'not-found', `No job ${request.params.id}.`);
          return jobResource(found.job, found.attempts);
        },
      );
    },
    { prefix: '/v1' },
  );

  return app;
}
export type Api = Awaited<ReturnType<typeof buildApi>>;
