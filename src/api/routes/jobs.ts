import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { JobEndings } from '../../db/jobEndings';
import type { JobEndMetrics } from '../../telemetry/histograms';
import type { Metrics } from '../../telemetry/metrics';
import { requireBearer } from '../auth';
import type { ApiDeps } from '../deps';
import type { WaitLimiter } from '../waitLimiter';
import { ownerBudgetRoutes } from './budgetRoutes';
import { jobActionRoutes } from './jobActions';
import { jobCreationRoute } from './jobCreation';
import { jobListRoute } from './jobList';
import { jobReadRoute } from './jobRead';

export interface JobRoutesOptions {
  deps: Pick<
    ApiDeps,
    | 'pool'
    | 'temporal'
    | 'taskQueue'
    | 'providers'
    | 'logger'
    | 'tokens'
    | 'waitPollMs'
    | 'ownerLimits'
    | 'listPageMaxBytes'
    | 'webhookRetry'
  >;
  /** With the metrics that observe a job its owner's cancel ends. */
  metrics: Pick<Metrics, 'jobsCreated' | 'jobsReplayed'> & JobEndMetrics;
  waits: WaitLimiter;
  endings: JobEndings;
}

/** An owner's jobs (under /v1). The owner comes only from the token. */
export const jobRoutes: FastifyPluginAsyncZod<JobRoutesOptions> = async (
  app,
  { deps, metrics, waits, endings },
) => {
  requireBearer(app, deps.tokens, 'token');

  await app.register(jobCreationRoute, { deps, metrics });
  await app.register(jobReadRoute, { deps, waits, endings });
  await app.register(jobListRoute, { deps });
  await app.register(jobActionRoutes, { deps, metrics });
  await app.register(ownerBudgetRoutes, { deps });
};
