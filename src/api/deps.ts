import type { SecretKeyRing } from '../domain/secretSealing';
import type { Settings } from '../domain/settings';
import type { MetricsAccess } from '../health/metricsAccess';
import type { Logger } from '../logger';
import type { JobServiceDeps } from '../service/jobs';
import type { AllowedTargets } from '../service/webhookTargets';
import type { ApiTokens } from './auth';

/** The settings the API is built with (complete: see withDefaults). */
export type ApiSettings = Pick<
  Settings,
  | 'taskQueue'
  | 'maxWaitsPerOwner'
  | 'waitPollMs'
  | 'callbackToleranceS'
  | 'listPageMaxBytes'
  | 'metricsFoldIntervalMs'
  | 'httpBounds'
  | 'webhookRetry'
  | 'webhookNames'
  | 'webhookLimits'
>;

/** What the API is built from; each route plugin takes the part it uses. */
export interface ApiDeps extends JobServiceDeps, ApiSettings {
  tokens: ApiTokens;
  /** Operators (settle attempts, cancel jobs): configured apart from owners. None = all get 401. */
  operatorTokens?: ApiTokens;
  logger: Logger;
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
  /** Who may read /metrics. Default: callers on loopback. */
  metricsAccess?: MetricsAccess;
  /** Send `x-onejob-instance` (host:pid) on every response. Default: no. */
  instanceHeader?: boolean;
  /** Whether webhook endpoints may be on internal networks (loopback, private). Default: no. */
  allowInternalWebhookTargets?: boolean;
  /** Internal hosts and ranges webhook endpoints may be on all the same. Default: none. */
  allowedWebhookTargets?: AllowedTargets;
  /** Whether webhook endpoints may be plain http (not https). Default: no. */
  allowPlainHttpWebhooks?: boolean;
  /** Seals the webhook signing secrets it creates (ONEJOB_SECRET_KEYS). */
  secretKeys: SecretKeyRing;
}
