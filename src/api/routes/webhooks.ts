import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findOwnedJob } from '../../db/jobs';
import {
  deleteEndpoint,
  deliveriesOfJob,
  enableEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  rotateSecret,
  type DeliveryRecord,
  type EndpointBreaker,
  type WebhookEndpoint,
  type WebhookEndpointWithBreaker,
} from '../../db/webhooks';
import { isUuid } from '../../domain/identity';
import { DELIVERY_STATES, WEBHOOK_EVENTS } from '../../domain/webhooks';
import { decodeCursor, encodeCursor } from '../../service/jobDocument';
import { takeWebhookRequest } from '../../service/ownerLimits';
import { newWebhookSecret } from '../../service/webhookDelivery';
import { WebhookNames } from '../../service/webhookNames';
import {
  internalTargetOf,
  WEBHOOK_URL_MAX_CHARS,
  WebhookTargetPolicy,
  webhookUrlProblem,
} from '../../service/webhookTargets';
import { authHeaders, requireBearer } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import { storableText } from '../storable';

/** How long a replaced secret still signs, unless the rotation says otherwise: one day. */
const DEFAULT_PREVIOUS_SECRET_SECONDS = 86_400;
/** A replaced secret signs at most a week. */
const MAX_PREVIOUS_SECRET_SECONDS = 604_800;

const endpointSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  description: z.string().nullable(),
  /** Set when nothing is sent to it: the receiver answered 410 Gone, or an operator disabled it. */
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable(),
  createdAt: z.string(),
});

/** An endpoint's breaker, shared with the operator's list. */
export const breakerSchema = z
  .object({
    state: z
      .enum(['closed', 'open', 'half_open'])
      .describe(
        'closed: tries go as events come; open: nothing is sent before heldUntil; half_open: the hold is over, the next try is a probe',
      ),
    failuresInARow: z
      .number()
      .int()
      .describe('Tries in a row not answered 2xx; a 2xx sets it back to 0'),
    heldUntil: z.string().nullable().describe('When the last hold ends (or ended)'),
    reason: z.string().nullable().describe('Why it was held'),
  })
  .describe(
    "The endpoint's circuit breaker: a receiver that keeps failing costs a probe, not a try per event",
  );

/** An endpoint's breaker as the API shows it. */
export function breakerResource(breaker: EndpointBreaker): z.infer<typeof breakerSchema> {
  return { ...breaker, heldUntil: breaker.heldUntil?.toISOString() ?? null };
}

const endpointWithBreakerSchema = endpointSchema.extend({ breaker: breakerSchema });

function endpointWithBreakerResource(
  endpoint: WebhookEndpointWithBreaker,
): z.infer<typeof endpointWithBreakerSchema> {
  return { ...endpointResource(endpoint), breaker: breakerResource(endpoint.breaker) };
}

const deliverySchema = z.object({
  id: z.uuid().describe('Sent as webhook-id: the same on every try.'),
  endpointId: z.uuid(),
  url: z.string(),
  event: z.enum(WEBHOOK_EVENTS),
  state: z.enum(DELIVERY_STATES),
  tries: z.array(
    z.object({
      n: z.number().int(),
      at: z.string(),
      status: z.number().int().nullable().describe("The receiver's HTTP status; null: no answer."),
      error: z.string().nullable(),
      durationMs: z.number().int(),
    }),
  ),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
});

function endpointResource(endpoint: WebhookEndpoint): z.infer<typeof endpointSchema> {
  return {
    ...endpoint,
    disabledAt: endpoint.disabledAt?.toISOString() ?? null,
    createdAt: endpoint.createdAt.toISOString(),
  };
}

function deliveryResource(delivery: DeliveryRecord): z.infer<typeof deliverySchema> {
  return {
    ...delivery,
    tries: delivery.tries.map((t) => ({ ...t, at: t.at.toISOString() })),
    createdAt: delivery.createdAt.toISOString(),
    endedAt: delivery.endedAt?.toISOString() ?? null,
  };
}

const endpointParams = z.object({ id: z.string().max(100) });

/** A page of a list: how many, and where the previous page said the next starts. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
});

/** A cursor into a job's deliveries: the position of the last one of the page before. */
const encodePositionCursor = (position: number): string =>
  Buffer.from(`d.${position}`, 'utf8').toString('base64url');

function decodePositionCursor(text: string): number | undefined {
  const match = /^d\.(\d{1,15})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** An owner's webhook endpoints, and the deliveries of its jobs (under /v1). */
export const webhookRoutes: FastifyPluginAsyncZod<{
  deps: Pick<
    ApiDeps,
    | 'pool'
    | 'tokens'
    | 'allowInternalWebhookTargets'
    | 'allowedWebhookTargets'
    | 'allowPlainHttpWebhooks'
    | 'webhookLimits'
    | 'ownerLimits'
    | 'secretKeys'
    | 'webhookNames'
  >;
}> = async (app, { deps }) => {
  requireBearer(app, deps.tokens, 'token');
  // Every webhook route draws from the owner's bucket of them once the token says who it is,
  // before its body is read: a flood of bad bodies is metered too.
  app.addHook('onRequest', async (request) => {
    if (request.ownerId) await takeWebhookRequest(deps, request.ownerId);
  });
  const names = new WebhookNames(deps.webhookNames);
  const targets = new WebhookTargetPolicy(
    deps.allowInternalWebhookTargets ?? false,
    deps.allowedWebhookTargets,
  );
  const limits = deps.webhookLimits;

  app.post(
    '/webhooks',
    {
      schema: {
        summary:
          'Register a webhook endpoint: your jobs’ events are POSTed to it, signed per Standard Webhooks with the secret in this answer (shown only here)',
        headers: authHeaders,
        body: z.strictObject({
          url: z
            .url({
              protocol: /^https?$/,
              error:
                'not an http or https URL this service can call (a zone id, a port above 65535 or a malformed name make it none)',
            })
            .max(WEBHOOK_URL_MAX_CHARS)
            .describe(
              'Where events are POSTed: https, or http where the deployment allows it (ONEJOB_WEBHOOK_PLAIN_HTTP).',
            ),
          events: z
            .array(z.enum(WEBHOOK_EVENTS))
            .min(1)
            .optional()
            .describe('The events it takes. Default: all of them.'),
          description: storableText(z.string().max(500)).optional(),
        }),
        response: {
          201: endpointSchema.extend({
            secret: z
              .string()
              .describe('whsec_…: the signing secret. Keep it; it is not shown again.'),
          }),
          ...problemResponses(401, 429, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const url = new URL(request.body.url);
      const unusable = webhookUrlProblem(request.body.url, url);
      if (unusable) return sendProblem(reply, 'validation-error', `url: ${unusable}.`);
      if (!deps.allowPlainHttpWebhooks && url.protocol === 'http:')
        return sendProblem(
          reply,
          'validation-error',
          'url: webhooks go over https only here (ONEJOB_WEBHOOK_PLAIN_HTTP); register an https URL.',
        );
      // Refused now if it names an internal address; each try checks again (DNS changes).
      const internal = await internalTargetOf(url.hostname, names, targets);
      if (internal)
        return sendProblem(
          reply,
          'validation-error',
          `url: ${internal}; webhooks go to public addresses, and to the internal hosts and ranges the operators list (ONEJOB_WEBHOOK_INTERNAL_TARGETS, ONEJOB_WEBHOOK_ALLOWED_TARGETS).`,
        );
      const secret = newWebhookSecret();
      const endpoint = await insertEndpoint(
        deps.pool,
        request.ownerId,
        {
          // As it is called: scheme and host in lower case, IDNs as punycode, encoded.
          url: url.href,
          events: [...new Set(request.body.events ?? WEBHOOK_EVENTS)],
          ...(request.body.description === undefined
            ? {}
            : { description: request.body.description }),
        },
        secret,
        limits.endpointsPerOwner,
        deps.secretKeys,
      );
      if (!endpoint)
        return sendProblem(
          reply,
          'too-many-webhook-endpoints',
          `This owner has ${limits.endpointsPerOwner} webhook endpoints, as many as it may (ONEJOB_WEBHOOK_ENDPOINTS_PER_OWNER); delete one it no longer uses, or send more events to one endpoint. Nothing was registered.`,
          { endpointsPerOwner: limits.endpointsPerOwner },
        );
      return reply
        .code(201)
        .header('location', `/v1/webhooks/${endpoint.id}`)
        .send({ ...endpointResource(endpoint), secret });
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'Your webhook endpoints, oldest first, a page at a time',
        headers: authHeaders,
        querystring: pageQuery,
        response: {
          200: z.object({
            endpoints: z.array(endpointWithBreakerSchema),
            nextCursor: z.string().nullable(),
          }),
          ...problemResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (cursor !== undefined && !after)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const page = await listEndpoints(deps.pool, request.ownerId, { limit, after });
      return {
        endpoints: page.endpoints.map(endpointWithBreakerResource),
        nextCursor: page.next ? encodeCursor(page.next) : null,
      };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        summary: 'One of your webhook endpoints',
        headers: authHeaders,
        params: endpointParams,
        response: { 200: endpointWithBreakerSchema, ...problemResponses(401, 429, 404) },
      },
    },
    async (request, reply) => {
      const endpoint = await findEndpoint(deps.pool, request.ownerId, request.params.id);
      if (!endpoint) return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      return endpointWithBreakerResource(endpoint);
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        summary: 'Delete a webhook endpoint: nothing more is sent to it; what waited is abandoned',
        headers: authHeaders,
        params: endpointParams,
        response: { 204: z.void().describe('Deleted.'), ...problemResponses(401, 429, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteEndpoint(deps.pool, request.ownerId, request.params.id)))
        return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      return reply.code(204).send();
    },
  );

  app.post(
    '/webhooks/:id/enable',
    {
      schema: {
        summary:
          'Turn an endpoint on again after a 410 disabled it: later events go to it (not one an operator disabled)',
        headers: authHeaders,
        params: endpointParams,
        response: { 200: endpointSchema, ...problemResponses(401, 429, 404, 409) },
      },
    },
    async (request, reply) => {
      const endpoint = await enableEndpoint(deps.pool, request.ownerId, request.params.id);
      if (!endpoint) return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      if (endpoint === 'operator-disabled')
        return sendProblem(
          reply,
          'endpoint-disabled-by-operator',
          `An operator disabled webhook endpoint ${request.params.id}; ask the service's operators to enable it. Nothing was changed.`,
        );
      return endpointResource(endpoint);
    },
  );

  app.post(
    '/webhooks/:id/secret-rotations',
    {
      schema: {
        summary:
          'Rotate the signing secret without a gap: the new one signs from now on, the old one too until it expires',
        headers: authHeaders,
        params: endpointParams,
        body: z
          .strictObject({
            previousSecretExpiresInSeconds: z
              .number()
              .int()
              .min(0)
              .max(MAX_PREVIOUS_SECRET_SECONDS)
              .optional()
              .describe('How long the replaced secret still signs. Default: 86400 (a day).'),
          })
          .nullish(),
        response: {
          200: z.object({
            secret: z.string().describe('whsec_…: the new secret; it is not shown again.'),
            previousSecretExpiresAt: z.string(),
          }),
          ...problemResponses(401, 429, 404, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const secret = newWebhookSecret();
      const seconds =
        request.body?.previousSecretExpiresInSeconds ?? DEFAULT_PREVIOUS_SECRET_SECONDS;
      const rotated = await rotateSecret(
        deps.pool,
        request.ownerId,
        request.params.id,
        secret,
        seconds * 1000,
        limits.liveSecretsPerEndpoint,
        deps.secretKeys,
      );
      if (!rotated) return sendNotFound(reply, `webhook endpoint ${request.params.id}`);
      if ('tooMany' in rotated) {
        const at = rotated.tooMany.nextExpiresAt;
        const waitS = Math.max(1, Math.ceil((at.getTime() - Date.now()) / 1000));
        return sendProblem(
          reply,
          'too-many-live-secrets',
          `Endpoint ${request.params.id} has ${limits.liveSecretsPerEndpoint} live signing secrets, as many as it may (ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT); the oldest replaced one expires at ${at.toISOString()}. Nothing was rotated.`,
          {
            liveSecretsPerEndpoint: limits.liveSecretsPerEndpoint,
            nextExpiresAt: at.toISOString(),
          },
          { 'retry-after': String(waitS) },
        );
      }
      return { secret, previousSecretExpiresAt: rotated.previousExpireAt.toISOString() };
    },
  );

  app.get(
    '/jobs/:id/webhook-deliveries',
    {
      schema: {
        summary:
          "A job's webhook deliveries, in the order they are sent, with every try, a page at a time",
        headers: authHeaders,
        params: z.object({ id: z.string() }),
        querystring: pageQuery,
        response: {
          200: z.object({ deliveries: z.array(deliverySchema), nextCursor: z.string().nullable() }),
          ...problemResponses(401, 429, 404),
        },
      },
    },
    async (request, reply) => {
      const given = request.params.id;
      const job = isUuid(given)
        ? await findOwnedJob(deps.pool, request.ownerId, given.toLowerCase())
        : undefined;
      if (!job) return sendNotFound(reply, `job ${request.params.id}`);
      const { limit, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodePositionCursor(cursor);
      if (cursor !== undefined && after === undefined)
        return sendProblem(reply, 'invalid-cursor', 'Use nextCursor from a previous page.');
      const page = await deliveriesOfJob(deps.pool, job.id, { limit, afterPosition: after });
      return {
        deliveries: page.deliveries.map(deliveryResource),
        nextCursor:
          page.nextPosition === undefined ? null : encodePositionCursor(page.nextPosition),
      };
    },
  );
};
