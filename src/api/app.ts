import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController } from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { hostname } from 'node:os';
import type { OpenAPIV3 } from 'openapi-types';
import { JobEndings } from '../db/jobEndings';
import { DEFAULTS } from '../domain/defaults';
import { BOUNDS_CHECK_INTERVAL_MS } from '../domain/httpBounds';
import { MAX_JSON_BYTES } from '../domain/jsonShape';
import { checkReadiness, postgresProbe, temporalProbe } from '../health/readiness';
import { jobPageSchema, jobResourceSchema } from '../service/jobDocument';
import { observe } from '../telemetry/histograms';
import { createMetrics } from '../telemetry/metrics';
import { nameRequestSpan } from '../telemetry/requestTracing';
import { bodyShapeProblem } from './bodyShape';
import type { ApiDeps } from './deps';
import { clientErrorHandler, frameworkErrorHandler, setErrorHandlers } from './errorHandler';
import { lingerBeforeClosing } from './lingeringClose';
import { amendOpenApiDocument } from './openapi';
import { sendProblem } from './problems';
import { answerProtocolRefusals } from './protocolRefusals';
import { discardRefusedBody } from './refusedBodies';
import { REQUEST_ID_HEADER, requestIdOf } from './requestId';
import { callbackRoutes } from './routes/callbacks';
import { jobRoutes } from './routes/jobs';
import { metaRoutes } from './routes/meta';
import { operatorRoutes } from './routes/operator';
import { webhookRoutes } from './routes/webhooks';
import { WaitLimiter } from './waitLimiter';

/** The HTTP API: its plugins, hooks and error handling; the routes live in ./routes. */
export async function buildApi(deps: ApiDeps) {
  const bounds = deps.httpBounds;
  const refusedBodyBounds = {
    maxBytes: bounds.refusedBodyMaxBytes,
    maxMs: bounds.refusedBodyMaxMs,
  };
  const app = Fastify({
    loggerInstance: deps.logger,
    // A caller's x-request-id is kept when it is safe to (requestIdOf), else one is made.
    requestIdHeader: false,
    genReqId: requestIdOf,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: deps.bodyLimit ?? MAX_JSON_BYTES,
    clientErrorHandler: clientErrorHandler(refusedBodyBounds),
    frameworkErrors: frameworkErrorHandler,
    // Every request ends: Fastify's defaults bound neither time nor connections.
    requestTimeout: bounds.requestTimeoutMs,
    connectionTimeout: bounds.connectionTimeoutMs,
    keepAliveTimeout: bounds.keepAliveTimeoutMs,
    maxRequestsPerSocket: bounds.maxRequestsPerSocket,
    http: {
      // answerProtocolRefusals checks Host itself, so that a request without one gets a problem.
      requireHostHeader: false,
      // Node compares these two when the server is made, before Fastify sets its own.
      requestTimeout: bounds.requestTimeoutMs,
      headersTimeout: bounds.headersTimeoutMs,
      // Node's default (30 s) would let a slow client run that far past its timeout.
      connectionsCheckingInterval: BOUNDS_CHECK_INTERVAL_MS,
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.server.maxConnections = bounds.maxConnections;
  lingerBeforeClosing(app.server, refusedBodyBounds);
  const waits = new WaitLimiter(deps.maxWaitsPerOwner);
  const metrics = createMetrics(deps.pool, { waitsInProgress: () => waits.total });
  // Every answer names its request's id, problems included, and when traced, its trace.
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    nameRequestSpan(request.method, request.routeOptions.url, reply);
  });
  // A route is its template, never its path: ids would make a series per job.
  app.addHook('onResponse', async (request, reply) => {
    observe(
      metrics.httpRequestSeconds,
      {
        route: request.routeOptions.url ?? 'unmatched',
        method: request.method,
        status_class: `${Math.floor(reply.statusCode / 100)}xx`,
      },
      reply.elapsedTime / 1000,
    );
  });
  // Bodies are JSON only: Fastify's built-in text/plain parser would let a plain-text body
  // through to the schema (a 400 that should be a 415).
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  // A job (and a page of jobs) is built field by field by jobResource(), whose return type is
  // the schema's own: checking it again on every response only cost CPU (a tenth of a replay's).
  // Every other response, problems included, is still encoded through its schema.
  const builtToSchema = new Set<unknown>([jobResourceSchema, jobPageSchema]);
  app.setSerializerCompiler((route) =>
    builtToSchema.has(route.schema)
      ? (data) => JSON.stringify(data)
      : // Every response schema here is a zod schema (the type provider's only kind).
        serializerCompiler(route as Parameters<typeof serializerCompiler>[0]),
  );

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'onejob',
        version: '1',
        description:
          'One intent, one job. Every POST /v1/jobs needs an Idempotency-Key; retrying with the same key and body returns the same job. Key retention: keys never expire. Only an operator can release the key of a job that has ended (POST /v1/operator/jobs/{id}/release-key, recorded with who, why and when); the next create with it makes a new job that supersedes the old one.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (document) =>
      'openapiObject' in document
        ? amendOpenApiDocument(document.openapiObject as OpenAPIV3.Document)
        : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  setErrorHandlers(app, metrics);
  answerProtocolRefusals(app, refusedBodyBounds);

  // A body the service could not walk or PostgreSQL could not store is the client's error.
  app.addHook('preValidation', async (request, reply) => {
    if (request.body === undefined || Buffer.isBuffer(request.body)) return;
    const problem = bodyShapeProblem(request.body, app.initialConfig.bodyLimit);
    if (problem) return sendProblem(reply, 'malformed-body', problem);
  });

  // Which replica answered: useful behind a load balancer, but it names hosts, so opt-in.
  if (deps.instanceHeader) {
    const instance = `${hostname()}:${process.pid}`;
    app.addHook('onSend', async (_request, reply) => {
      reply.header('x-onejob-instance', instance);
    });
  }
  // A refusal sent before its body has all arrived (401, 413, 415…): the rest is read only
  // up to the bounds, never for ever (Node alone would drain it without limit).
  app.addHook('onSend', async (request, reply) => {
    if (reply.statusCode >= 400 && !request.raw.complete)
      discardRefusedBody(request, reply, refusedBodyBounds);
  });

  // Scrapes fold the metric deltas too; this keeps them few when nobody scrapes.
  const folding = setInterval(() => {
    metrics.fold().catch((error: unknown) => {
      app.log.warn({ err: error }, 'folding the metric counts failed; the next fold retries');
    });
  }, deps.metricsFoldIntervalMs);
  folding.unref();
  app.addHook('onClose', async () => clearInterval(folding));
  const endings = await JobEndings.listen(deps.pool, deps.logger);
  app.addHook('onClose', async () => endings.close());

  const probes = {
    postgres: postgresProbe(deps.pool),
    temporal: temporalProbe(deps.temporal, DEFAULTS.readinessTimeoutMs),
  };
  await app.register(metaRoutes, {
    metrics,
    access: deps.metricsAccess ?? { kind: 'loopback' },
    readiness: () => checkReadiness(probes, deps.logger),
  });
  await app.register(jobRoutes, { prefix: '/v1', deps, metrics, waits, endings });
  await app.register(webhookRoutes, { prefix: '/v1', deps });
  await app.register(operatorRoutes, { prefix: '/v1/operator', deps: { ...deps, metrics } });
  await app.register(callbackRoutes, { prefix: '/v1/callbacks', deps: { ...deps, metrics } });

  return app;
}

export type Api = Awaited<ReturnType<typeof buildApi>>;
