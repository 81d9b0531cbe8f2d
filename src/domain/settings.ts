import type { HttpBounds } from './httpBounds';
import type { WebhookBreaker, WebhookNameSettings, WebhookRetry } from './webhooks';

/**
 * The tunable settings the API and the worker are built with, each one complete: the modules
 * that take them never fall back to a default of their own. config.ts reads them from the
 * environment, and its withDefaults fills them for whatever builds an API or a worker in process.
 */
export interface Settings {
  /** The job task queue. */
  taskQueue: string;
  /** Hedged jobs: the delay before the fallback starts while the primary's p95 is not known. */
  defaultHedgeDelayMs: number;
  /** Attempts per job at most (plan, fallbacks and users' requests together). */
  maxAttemptsPerJob: number;
  /** A job workflow continues-as-new once its history has this many events. */
  historyEventLimit: number;
  /** The longest wait between two looks at an unknown attempt. */
  reconcileMaxDelayMs: number;
  /** The wait after the first look at an unknown attempt (it doubles from there). */
  reconcileFirstDelayMs: number;
  /** How often a workflow blocked on an unknown attempt looks at it itself. */
  blockedSelfLookMs: number;
  /** An attempt unknown this long sends `job.needs_operator`. */
  needsOperatorAfterMs: number;
  /** How webhook deliveries are retried. */
  webhookRetry: WebhookRetry;
  /** How receivers' names are resolved (ONEJOB_WEBHOOK_DNS_*). */
  webhookNames: WebhookNameSettings;
  /** When an endpoint's breaker opens, and how long it holds. */
  webhookBreaker: WebhookBreaker;
  /** Webhook tries out at once on one worker: in all, and for one owner. */
  webhookSends: { perProcess: number; perOwner: number };
  /** A delivery waiting this long with no sender gets one. */
  webhookStrandedAfterMs: number;
  /** Provider calls one worker process runs at once. */
  maxConcurrentProviderCalls: number;
  /** Workflow runs one worker keeps cached between their tasks. */
  maxCachedWorkflows: number;
  /** After a shutdown request, how long running provider calls may go on. */
  shutdownForceTimeMs: number;
  /** How long a run's next task waits on a worker's sticky queue. */
  stickyQueueTimeoutMs: number;
  /** `?wait=` requests one owner may hold open at once on one API process. */
  maxWaitsPerOwner: number;
  /** Between a `?wait=` request's looks at its job while job endings are heard. */
  waitPollMs: number;
  /** How old a signed provider callback may be, in seconds. */
  callbackToleranceS: number;
  /** A `GET /v1/jobs` page carrying inputs or results stops before this many bytes. */
  listPageMaxBytes: number;
  /** How often the API folds its metric deltas when nobody scrapes. */
  metricsFoldIntervalMs: number;
  /** How long and how much one client may hold of the API server. */
  httpBounds: HttpBounds;
  /** Webhook endpoints per owner and live secrets per endpoint, at most. */
  webhookLimits: { endpointsPerOwner: number; liveSecretsPerEndpoint: number };
}
