import type { HttpBounds } from '../domain/httpBounds';
import type { SecretKeyRing } from '../domain/secretSealing';
import type { WebhookNameSettings, WebhookRetry } from '../domain/webhooks';
import type { MetricsAccess } from '../health/metricsAccess';
import type { Logger } from '../logger';
import type { JobServiceDeps } from '../service/jobs';
import type { AllowedTargets } from '../service/webhookTargets';
import type { ApiTokens } from './auth';

/** What the API is built from; each route plugin takes the part it uses. */
export interface ApiDeps extends JobServiceDeps {
  tokens: ApiTokens;
  /** Operators (settle attempts, cancel jobs): configured apart from owners. None = all get 401. */
  operatorTokens?: ApiTokens;
  logger: Logger;
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
  /** `?wait=` requests one owner may hold open at once on this process. Default: DEFAULTS. */
  maxWaitsPerOwner?: number;
  /** Between a `?wait=` request's looks at its job while job endings are heard. Default: DEFAULTS. */
  waitPollMs?: number;
  /** How old a signed provider callback may be, in seconds. Default: DEFAULTS. */
  callbackToleranceS?: number;
  /** Who may read /metrics. Default: callers on loopback. */
  metricsAccess?: MetricsAccess;
  /** A `GET /v1/jobs` page carrying inputs or results stops before this many bytes. Default: DEFAULTS. */
  listPageMaxBytes?: number;
  /** How often the metric deltas are folded into their totals when nobody scrapes. Default: DEFAULTS. */
  metricsFoldIntervalMs?: number;
  /** Send `x-onejob-instance` (host:pid) on every response. Default: no. */
  instanceHeader?: boolean;
  /** How long and how much one client may hold of the server. Default: DEFAULTS. */
  httpBounds?: HttpBounds;
  /** Whether webhook endpoints may be on internal networks (loopback, private). Default: no. */
  allowInternalWebhookTargets?: boolean;
  /** Internal hosts and ranges webhook endpoints may be on all the same. Default: none. */
  allowedWebhookTargets?: AllowedTargets;
  /** Whether webhook endpoints may be plain http (not https). Default: no. */
  allowPlainHttpWebhooks?: boolean;
  /** How the webhook senders this process starts retry (jobs without a workflow). Default: DEFAULTS. */
  webhookRetry?: Partial<WebhookRetry>;
  /** Seals the webhook signing secrets it creates (ONEJOB_SECRET_KEYS). */
  secretKeys: SecretKeyRing;
  /** How receivers' names are resolved (ONEJOB_WEBHOOK_DNS_*). Default: the system's servers. */
  webhookNames?: WebhookNameSettings;
  /** Endpoints per owner and live secrets per endpoint, at most. Default: DEFAULTS. */
  webhookLimits?: { endpointsPerOwner: number; liveSecretsPerEndpoint: number };
}
