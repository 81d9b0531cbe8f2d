import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool';
import type { SecretKeyRing } from '../domain/secretSealing';
import type { WebhookBreaker, WebhookNameSettings, WebhookRetry } from '../domain/webhooks';
import type { Logger } from '../logger';
import type { ProviderRegistry } from '../providers/registry';
import type { AllowedTargets } from '../service/webhookTargets';
import type { WorkerMetrics } from '../telemetry/histograms';
import { DEFAULT_TASK_QUEUE } from '../workflows/definitions';
export type { JobPlan, PlannedProvider } from '../workflows/definitions';

export interface ActivityDeps {
  pool: Pool;
  providers: ProviderRegistry;
  logger: Logger;
  /** To tell a job's workflow that an attempt settled after it stopped waiting. */
  temporal: Client;
  /** The job task queue (webhook senders started outside a job's workflow run there). */
  taskQueue?: string;
  /** Hedge delay when the primary has no observed p95 yet. */
  defaultHedgeDelayMs?: number;
  /** Require certification of the primary too (failover always requires it). */
  requireCertifiedPrimary?: boolean;
  /** Attempts per job at most (plan, fallbacks and users' requests together). */
  maxAttemptsPerJob?: number;
  historyEventLimit?: number;
  reconcileMaxDelayMs?: number;
  reconcileFirstDelayMs?: number;
  blockedSelfLookMs?: number;
  /** How webhook deliveries are retried (DEFAULTS.webhookRetry for what is left out). */
  webhookRetry?: Partial<WebhookRetry>;
  /** Whether webhooks may go to internal networks (loopback, private, link-local). Default: no. */
  allowInternalWebhookTargets?: boolean;
  /** Internal hosts and ranges webhooks may go to all the same. Default: none. */
  allowedWebhookTargets?: AllowedTargets;
  /** Whether webhooks may go over plain http (not https). Default: no. */
  allowPlainHttpWebhooks?: boolean;
  /** Opens webhook signing secrets, stored sealed (ONEJOB_SECRET_KEYS). */
  secretKeys: SecretKeyRing;
  /** How receivers' names are resolved (ONEJOB_WEBHOOK_DNS_*). Default: the system's servers. */
  webhookNames?: WebhookNameSettings;
  /** When an endpoint's breaker opens, and how long it holds (DEFAULTS.webhookBreaker). */
  webhookBreaker?: WebhookBreaker;
  /** Webhook tries out at once: in all, and for one owner (DEFAULTS.webhookSendsPer…). */
  webhookSends?: { perProcess: number; perOwner: number };
  /** A delivery waiting this long with no sender gets one (DEFAULTS.strandedDeliveryAfterMs). */
  webhookStrandedAfterMs?: number;
  /** An attempt unknown this long sends `job.needs_operator` (DEFAULTS.needsOperatorAfterMs). */
  needsOperatorAfterMs?: number;
  /** What hedging may spend; without it, hedged jobs always hedge. */
  hedgeBudget?: HedgeBudget;
  /** Where the worker's own metrics are kept (served with its health checks); none without. */
  metrics?: Pick<
    WorkerMetrics,
    'providerCallSeconds' | 'hedgingPaused' | 'jobSeconds' | 'unknownSeconds'
  >;
}

/**
 * Hedging's budget, per primary provider: the hedges of hedged jobs may cost at most `share`
 * (0.1 = 10 %) more than their primaries' calls did over the last `windowMs`, and a hedge
 * expected to cost more than `maxExtraPerJob` (the mean cost of a call on its provider over
 * the window, in that provider's currency) is not started. Spent, a new hedged job runs exclusive.
 */
export interface HedgeBudget {
  share?: number;
  maxExtraPerJob?: number;
  windowMs: number;
  /** How long one look at the window's spend is reused (it reads every hedged call in it). */
  refreshMs: number;
}

/** The job task queue of these activities' worker. */
export const jobTaskQueue = (deps: Pick<ActivityDeps, 'taskQueue'>): string =>
  deps.taskQueue ?? DEFAULT_TASK_QUEUE;
