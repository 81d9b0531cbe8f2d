import { hostname } from 'node:os';
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
import {
  acceptProviderCallback,
  cancelJob,
  requestAttempt,
  resolveAttempt,
} from '../service/attempts';
import { SIGNATURE_HEADER, verifyCallbackSignature } from './signatures';
import { isDependencyUnavailable } from './unavailable';
import { createMetrics } from './metrics';
import { JOB_MODES, JOB_STATUSES } from '../domain/job';
import { IDEMPOTENCY_KEY_RULE, isValidIdempotencyKey } from '../domain/identity';
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
  /** Operators (settle attempts, cancel jobs): configured apart from owners. None = no operator routes. */
  operatorTokens?: ApiTokens;
  logger: Logger;
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
  /** `?wait=` requests one owner may hold open at once on this process. Default 100. */
  maxWaitsPerOwner?: number;
  /** How old a signed provider callback may be, in seconds. Default 300. */
  callbackToleranceS?: number;
  /** How long /metrics may reuse a whole-table count. Default 15 s. */
  metricsCacheMs?: number;
}

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

const callbackBody = z.discriminatedUnion('status', [
  z.strictObject({
    attemptId: z.string().max(100),
    status: z.literal('succeeded'),
    output: z.unknown(),
  }),
  z.strictObject({
    attemptId: z.string().max(100),
    status: z.literal('failed'),
    error: z.string().max(2000),
  }),
]);

const attemptSummarySchema = z.object({
  attemptId: z.string(),
  seq: z.number().int(),
  provider: z.string(),
  state: z.string(),
});

const authHeaders = z
  .object({ authorization: z.string().optional().describe('Bearer <token>') })
  .loose();

/** Counts the `?wait=` requests each owner holds open, and refuses past the limit. */
class WaitLimiter {
  private readonly byOwner = new Map<string, number>();
  total = 0;

  constructor(readonly limit: number) {}

  /** A release function, or undefined when this owner already waits on `limit` requests. */
  enter(ownerId: string): (() => void) | undefined {
    const held = this.byOwner.get(ownerId) ?? 0;
    if (held >= this.limit) return undefined;
    this.byOwner.set(ownerId, held + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byOwner.get(ownerId) ?? 1) - 1;
      if (left === 0) this.byOwner.delete(ownerId);
      else this.byOwner.set(ownerId, left);
    };
  }
}

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
  const waits = new WaitLimiter(deps.maxWaitsPerOwner ?? 100);
  const metrics = createMetrics(deps.pool, {
    waitsInProgress: () => waits.total,
    cacheMs: deps.metricsCacheMs,
  });
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
      if (type === 'idempotency-key-reuse') metrics.conflicts.inc();
      const headers: Record<string, string> =
        type === 'idempotency-key-reuse' ? { 'x-should-retry': 'false' } : {};
      if (type === 'attempt-in-flight') {
        // An unknown attempt takes reconciliation (a minute or more); a running one, about its timeout.
        const blocking = error.details.blockingAttempt as { state?: string } | undefined;
        headers['retry-after'] = blocking?.state === 'unknown' ? '60' : '5';
      }
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
    if (isDependencyUnavailable(error)) {
      request.log.warn({ err: error }, 'a dependency is unavailable');
      return sendProblem(
        reply,
        'service-unavailable',
        'PostgreSQL or Temporal cannot be reached right now; nothing was lost. Retry with the same Idempotency-Key.',
        {},
        { 'retry-after': '5' },
      );
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(
      reply,
      'internal',
      'Something went wrong on our side; retrying with the same Idempotency-Key is safe.',
    );
  });

  // Which replica answered: useful behind a load balancer, and harmless.
  const instance = `${hostname()}:${process.pid}`;
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-onejob-instance', instance);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 'not-found', `No route ${request.method} ${request.url}.`),
  );

  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

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
                .describe(`${IDEMPOTENCY_KEY_RULE}, chosen by the client per intent`),
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
          (created ? metrics.jobsCreated : metrics.jobsReplayed).inc({ type: job.type });
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
          const waitMs = (request.query.wait ?? 0) * 1000;
          if (waitMs === 0) {
            const found = await getJob(deps, request.ownerId, request.params.id);
            if (!found) return sendProblem(reply, 'not-found', `No job ${request.params.id}.`);
            return jobResource(found.job, found.attempts);
          }
          const release = waits.enter(request.ownerId);
          if (!release) {
            return sendProblem(
              reply,
              'too-many-waits',
              `At most ${waits.limit} requests may wait on jobs at once; poll without ?wait= or retry shortly.`,
              {},
              { 'retry-after': '1' },
            );
          }
          // The wait ends when the client goes away: an abandoned wait costs nothing more.
          const gone = new AbortController();
          reply.raw.once('close', () => gone.abort());
          try {
            const found = await getJob(deps, request.ownerId, request.params.id, {
              waitMs,
              signal: gone.signal,
            });
            if (gone.signal.aborted) return reply;
            if (!found) return sendProblem(reply, 'not-found', `No job ${request.params.id}.`);
            return jobResource(found.job, found.attempts);
          } finally {
            release();
          }
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

      routes.post(
        '/jobs/:id/attempts',
        {
          schema: {
            summary: 'Try again, or use the fallback: a new attempt under the same job',
            headers: authHeaders,
            params: z.object({ id: z.string() }),
            body: z.strictObject({ provider: z.string().min(1).max(63).optional() }).optional(),
            response: { 202: attemptSummarySchema, '4xx': problemSchema },
          },
        },
        async (request, reply) => {
          const attempt = await requestAttempt(
            deps,
            request.ownerId,
            request.params.id,
            request.body?.provider,
          );
          if (!attempt) return sendProblem(reply, 'not-found', `No job ${request.params.id}.`);
          return reply.code(202).header('location', `/v1/jobs/${request.params.id}`).send(attempt);
        },
      );
    },
    { prefix: '/v1' },
  );

  // Operators settle what only a human can know, and cancel jobs: their own tokens, any owner's job.
  await app.register(
    async (ops) => {
      ops.decorateRequest('ownerId', '');
      ops.addHook('onRequest', async (request, reply) => {
        const operator = deps.operatorTokens?.ownerFromHeader(request.headers.authorization);
        if (!operator) {
          return sendProblem(
            reply,
            'unauthorized',
            'Send Authorization: Bearer <operator token>.',
            {},
            { 'www-authenticate': 'Bearer' },
          );
        }
        request.ownerId = operator;
      });
      const routes = ops.withTypeProvider<ZodTypeProvider>();

      routes.post(
        '/attempts/:attemptId/resolve',
        {
          schema: {
            summary:
              'Settle an unknown attempt: failed (with a reason) or succeeded (with its result, through the CAS)',
            headers: authHeaders,
            params: z.object({ attemptId: z.string().max(100) }),
            body: z.discriminatedUnion('outcome', [
              z.strictObject({ outcome: z.literal('failed'), reason: z.string().min(1).max(2000) }),
              z.strictObject({
                outcome: z.literal('succeeded'),
                reason: z.string().min(1).max(2000),
                result: z.unknown(),
              }),
            ]),
            response: {
              200: z.object({ attemptId: z.string(), state: z.string() }),
              '4xx': problemSchema,
            },
          },
        },
        async (request, reply) => {
          const resolved = await resolveAttempt(
            deps,
            request.ownerId,
            request.params.attemptId,
            request.body,
          );
          if (!resolved)
            return sendProblem(reply, 'not-found', `No attempt ${request.params.attemptId}.`);
          return resolved;
        },
      );

      routes.post(
        '/jobs/:id/cancel',
        {
          schema: {
            summary: 'Cancel a job; results that still arrive are discarded and logged',
            headers: authHeaders,
            params: z.object({ id: z.string() }),
            body: z.strictObject({ reason: z.string().min(1).max(2000) }),
            response: {
              200: z.object({ jobId: z.string(), status: z.string() }).loose(),
              '4xx': problemSchema,
            },
          },
        },
        async (request, reply) => {
          const cancelled = await cancelJob(
            deps,
            request.ownerId,
            request.params.id,
            request.body.reason,
          );
          if (!cancelled) return sendProblem(reply, 'not-found', `No job ${request.params.id}.`);
          return { ...cancelled };
        },
      );
    },
    { prefix: '/v1/operator' },
  );

  // Providers report late outcomes here, signed with their per-provider secret and a timestamp.
  await app.register(
    async (callbacks) => {
      callbacks.removeAllContentTypeParsers();
      callbacks.addContentTypeParser(
        'application/json',
        { parseAs: 'buffer' },
        (_request, body, done) => done(null, body),
      );
      callbacks.withTypeProvider<ZodTypeProvider>().post(
        '/:provider',
        {
          schema: {
            summary:
              'A provider reports the outcome of an attempt (header onejob-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">)',
            params: z.object({ provider: z.string().max(63) }),
            response: {
              200: z.object({ attemptId: z.string(), state: z.string() }).loose(),
              '4xx': problemSchema,
            },
          },
        },
        async (request, reply) => {
          const provider = request.params.provider;
          const secret = deps.providers.has(provider)
            ? deps.providers.callbackSecret(provider)
            : undefined;
          const raw = request.body as Buffer;
          const check = secret
            ? verifyCallbackSignature(secret, raw, request.headers[SIGNATURE_HEADER], {
                toleranceS: deps.callbackToleranceS,
              })
            : { ok: false as const, reason: `provider ${provider} takes no callbacks` };
          if (!check.ok) {
            return sendProblem(
              reply,
              'bad-signature',
              `${check.reason}. Sign as ${SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<exact body>" with the provider secret>.`,
            );
          }
          let report: z.infer<typeof callbackBody>;
          try {
            const parsed = callbackBody.safeParse(JSON.parse(raw.toString('utf8')));
            if (!parsed.success)
              return sendProblem(reply, 'validation-error', z.prettifyError(parsed.error));
            report = parsed.data;
          } catch {
            return sendProblem(reply, 'malformed-body', 'The body is not JSON.');
          }
          const accepted = await acceptProviderCallback(
            deps,
            { provider, signedAt: check.signedAt, digest: check.digest },
            report,
          );
          if (!accepted)
            return sendProblem(
              reply,
              'not-found',
              `No attempt ${report.attemptId} for provider ${provider}.`,
            );
          if (accepted.replayed) reply.header('idempotent-replayed', 'true');
          return { ...accepted.outcome };
        },
      );
    },
    { prefix: '/v1/callbacks' },
  );

  return app;
}

export type Api = Awaited<ReturnType<typeof buildApi>>;
