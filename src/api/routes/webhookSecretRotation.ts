/** POST /webhooks/:id/secret-rotations: a new signing secret, the old one live a while longer. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { rotateSecret } from '../../db/webhookEndpoints';
import { newWebhookSecret } from '../../service/webhookSigning';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendNotFound, sendProblem } from '../problems';
import { endpointParams } from './webhookSchemas';

/** How long a replaced secret still signs, unless the rotation says otherwise: one day. */
const DEFAULT_PREVIOUS_SECRET_SECONDS = 86_400;
/** A replaced secret signs at most a week. */
const MAX_PREVIOUS_SECRET_SECONDS = 604_800;

/** Rotates an endpoint's secret (under webhookRoutes, which authenticates it). */
export const webhookSecretRotationRoute: FastifyPluginAsyncZod<{
  deps: Pick<ApiDeps, 'pool' | 'secretKeys'>;
  limits: NonNullable<ApiDeps['webhookLimits']>;
}> = async (app, { deps, limits }) => {
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
        return sendProblem(
          reply,
          'too-many-live-secrets',
          `Endpoint ${request.params.id} has ${limits.liveSecretsPerEndpoint} live signing secrets, as many as it may (ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT); the oldest replaced one expires at ${at.toISOString()}. Nothing was rotated.`,
          {
            liveSecretsPerEndpoint: limits.liveSecretsPerEndpoint,
            nextExpiresAt: at.toISOString(),
          },
        );
      }
      return { secret, previousSecretExpiresAt: rotated.previousExpireAt.toISOString() };
    },
  );
};
