import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool';
import type { RejectionRule } from '../domain/rejectionRate';
import type { SecretKeyRing } from '../domain/secretSealing';
import type { Settings } from '../domain/settings';
import type { Logger } from '../logger';
import type { ProviderRegistry } from '../providers/registry';
import type { AllowedTargets } from '../service/webhookTargets';
import type { WorkerMetrics } from '../telemetry/histograms';
export type { JobPlan, PlannedProvider } from '../workflows/definitions';

/** The settings the worker's activities are built with (complete: see withDefaults). */
export type ActivitySettings = Pick<
  Settings,
  | 'taskQueue'
  | 'defaultHedgeDelayMs'
  | 'maxAttemptsPerJob'
  | 'historyEventLimit'
  | 'reconcileMaxDelayMs'
  | 'reconcileFirstDelayMs'
  | 'blockedSelfLookMs'
  | 'needsOperatorAfterMs'
  | 'webhookRetry'
  | 'webhookNames'
  | 'webhookBreaker'
  | 'webhookSends'
  | 'webhookStrandedAfterMs'
>;

export interface ActivityDeps extends ActivitySettings {
  pool: Pool;
  providers: ProviderRegistry;
  logger: Logger;
  /** To tell a job's workflow that an attempt settled after it stopped waiting. */
  temporal: Client;
  /** Require certification of the primary too (failover always requires it). */
  requireCertifiedPrimary?: boolean;
  /** Whether webhooks may go to internal networks (loopback, private, link-local). Default: no. */
  allowInternalWebhookTargets?: boolean;
  /** Internal hosts and ranges webhooks may go to all the same. Default: none. */
  allowedWebhookTargets?: AllowedTargets;
  /** Whether webhooks may go over plain http (not https). Default: no. */
  allowPlainHttpWebhooks?: boolean;
  /** Opens webhook signing secrets, stored sealed (ONEJOB_SECRET_KEYS). */
  secretKeys: SecretKeyRing;
  /** When a provider loses fallback and hedge eligibility (continuous certification); none: never. */
  rejectionRule?: RejectionRule;
  /** How soon a held admission is tried again (default 30 s). */
  admissionHoldRecheckMs?: number;
  /** How soon a job asks again for a later fallback that lost its eligibility (default 60 s). */
  decertifiedRecheckMs?: number;
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
