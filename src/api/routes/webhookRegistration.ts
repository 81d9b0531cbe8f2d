/** POST /webhooks: registers an owner's endpoint, checking its URL against the target policy. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { insertEndpoint } from '../../db/webhookEndpoints';
import { WEBHOOK_EVENTS } from '../../domain/webhooks';
import type { WebhookNames } from '../../service/webhookNames';
import { newWebhookSecret } from '../../service/webhookSigning';
import {
  internalTargetOf,
  WEBHOOK_URL_MAX_CHARS,
  type WebhookTargetPolicy,
  webhookUrlProblem,
} from '../../service/webhookTargets';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendProblem } from '../problems';
import { storableText } from '../storable';
import { endpointResource, endpointSchema } from './webhookSchemas';

/** Registers an endpoint (under webhookRoutes, whose hooks authenticate and meter it). */
export const webhookRegistrationRoute: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'allowPlainHttpWebhooks' | 'secretKeys'>;
  names: WebhookNames;
  targets: WebhookTargetPolicy;
  limits: NonNullable<ApiDeps['webhookLimits']>;
}> = async (app, { deps, names, targets, limits }) => {
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
};
