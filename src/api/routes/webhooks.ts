import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { takeWebhookRequest } from '../../service/ownerLimits';
import { WebhookNames } from '../../service/webhookNames';
import { WebhookTargetPolicy } from '../../service/webhookTargets';
import { requireBearer } from '../auth';
import type { ApiDeps } from '../deps';
import { webhookDeliveryRoutes } from './webhookDeliveryRoutes';
import { webhookEndpointRoutes } from './webhookEndpointRoutes';
import { ownerRedeliveryRoute } from './webhookRedeliveryRoutes';
import { webhookRegistrationRoute } from './webhookRegistration';
import { webhookSecretRotationRoute } from './webhookSecretRotation';

/** An owner's webhook endpoints, the deliveries of its jobs, and redeliveries (under /v1). */
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
    | 'temporal'
    | 'logger'
    | 'taskQueue'
    | 'webhookRetry'
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

  await app.register(webhookRegistrationRoute, { deps, names, targets, limits });
  await app.register(webhookEndpointRoutes, { deps });
  await app.register(webhookSecretRotationRoute, { deps, limits });
  await app.register(webhookDeliveryRoutes, { deps });
  await app.register(ownerRedeliveryRoute, { deps });
};
