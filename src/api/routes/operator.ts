import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { JobEndMetrics } from '../../telemetry/histograms';
import { requireBearer } from '../auth';
import type { ApiDeps } from '../deps';
import { operatorBudgetRoutes } from './budgetRoutes';
import { operatorJobRoutes } from './operatorJobRoutes';
import { operatorWebhookRoutes } from './operatorWebhookRoutes';
import { operatorRedeliveryRoute } from './webhookRedeliveryRoutes';

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
 * Operators (under /v1/operator) settle what only a human can know, cancel jobs, and disable or
 * delete webhook endpoints: their own tokens, any owner's job or endpoint.
 */
export const operatorRoutes: FastifyPluginAsyncZod<OperatorRoutesOptions> = async (
  app,
  { deps },
) => {
  requireBearer(app, deps.operatorTokens, 'operator token');

  await app.register(operatorJobRoutes, { deps });
  await app.register(operatorWebhookRoutes, { deps });
  await app.register(operatorRedeliveryRoute, { deps });
  await app.register(operatorBudgetRoutes, { deps });
};
