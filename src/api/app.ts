import Fastify, { type FastifyError } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Logger } from '../logger';
import { ServiceError } from '../service/errors';
import { createJob, getJob, listJobs, type JobServiceDeps } from '../service/jobs';
import { JOB_MODES, JOB_STATUSES } from '../domain/job';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/workflowId';
import type { ApiTokens } from './auth';
import { isProblemType, PROBLEM_TYPES, rawProblemResponse, sendProblem } from './problems';
import {
  decodeCursor,
  encodeCursor,
  jobPageSchema,
  jobResource,
  jobResourceSchema,
} from './representation';

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

const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number(),
    detail: z.string().optional(),
  })
  .loose()
  .describe('RFC 9457 problem details (application/problem+json)');

const authHeaders = z
  .object({ authorization: z.string().optional().describe('Bearer <token>') })
  .loose();

export async function buildApi(deps: ApiDeps) {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    // Requests Node's parser refuses (a NUL or control character in a header) still get a problem.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
      if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
      socket.end(
        error.code === 'HPE_HEADER_OVERFLOW'
          ? rawProblemResponse('headers-too-large', 'The request headers exceed the server limit.')
          : rawProblemResponse(
              'malformed-request',
              'The request could not be parsed. Header values (Idempotency-Key included) may not contain NUL or other control characters.',
            ),
      );
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'onejob',
        version: '1',
        description:
          'One intent, one job. Every POST /v1/jobs needs an Idempotency-Key; retrying with the same key and body returns the same job.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

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

  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  app.get(
    '/problems/:type',
    { schema: { hide: true, params: z.object({ type: z.string() }) } },
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
      const routes = v1.withTypeProvider<ZodTypeProvider>();

      routes.post(
        '/jobs',
        {
          schema: {
            summary: 'Create a job, or get the job this Idempotency-Key already made',
            headers: authHeaders.extend({
              'idempotency-key': z
                .string()
                .optional()
                .describe(
                  `1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, chosen by the client per intent`,
                ),
            }),
            body: createJobBody,
            response: { 201: jobResourceSchema, 200: jobResourceSchema, '4xx': problemSchema },
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
          reply.header('location', `/v1/jobs/${job.id}`);
          if (!created) reply.header('idempotent-replayed', 'true');
          return reply.code(created ? 201 : 200).send(jobResource(job));
        },
      );

      routes.get(
        '/jobs/:id',
        {
          schema: {
            summary: 'Get a job; with ?wait=<seconds>, wait until it is terminal',
            headers: authHeaders,
            params: z.object({ id: z.string() }),
            querystring: z.object({
              wait: z.coerce.number().min(0).max(MAX_WAIT_SECONDS).optional(),
            }),
            response: { 200: jobResourceSchema, '4xx': problemSchema },
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

      routes.get(
        '/jobs',
        {
          schema: {
            summary: "List the caller's jobs, newest first",
            headers: authHeaders,
            querystring: z.object({
              status: z.enum(JOB_STATUSES).optional(),
              limit: z.coerce.number().int().min(1).max(100).default(20),
              cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
            }),
            response: { 200: jobPageSchema, '4xx': problemSchema },
          },
        },
        async (request, reply) => {
          const { status, limit, cursor } = request.query;
          const after = cursor === undefined ? undefined : decodeCursor(cursor);
          if (cursor !== undefined && !after)
            return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
          const page = await listJobs(deps, request.ownerId, { status, limit, after });
          return {
            jobs: page.jobs.map((job) => jobResource(job)),
            nextCursor: page.next ? encodeCursor(page.next) : null,
          };
        },
      );
    },
    { prefix: '/v1' },
  );

  return app;
}

export type Api = Awaited<ReturnType<typeof buildApi>>;
