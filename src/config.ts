import type { MigrationMode } from './db/migrate';
import { DEFAULTS } from './domain/defaults';
import { ownerLimitSettings } from './domain/ownerLimits';
import { startedByDevStack } from './domain/publishedSecrets';
import { secretKeyRing } from './domain/secretSealing';
import type { Settings } from './domain/settings';
import { decertifiedRecheckMs, rejectionRule } from './settings/continuousCertification';
import { httpBounds } from './settings/http';
import {
  listenAddress,
  milliseconds,
  optionalAmount,
  optionalShare,
  optionalToken,
  port,
  positiveInteger,
  required,
} from './settings/read';
import {
  webhookAllowance,
  webhookLimits,
  webhookNameSettings,
  webhookRetrySettings,
  webhookTargets,
} from './settings/webhooks';
import { temporalConnectionSettings } from './temporal/connection';

// What each process reads from its environment, complete: each variable's reading and check is
// in src/settings/, its default in DEFAULTS (docs/contributing.md, "Add a setting").

/** ONEJOB_TASK_QUEUE: the job task queue the services (and the CLI) use. */
export function taskQueueSetting(env: NodeJS.ProcessEnv = process.env): string {
  return env.ONEJOB_TASK_QUEUE ?? DEFAULTS.taskQueue;
}

/**
 * The settings modules take (Settings) that both services read: the API's job routes start
 * webhook senders too (a job without a workflow), so they retry and resolve names alike.
 */
function sharedSettings(env: NodeJS.ProcessEnv) {
  return {
    taskQueue: taskQueueSetting(env),
    /** Hedged jobs: the delay before the fallback starts while the primary's p95 is not known. */
    defaultHedgeDelayMs: milliseconds(env, 'ONEJOB_HEDGE_DELAY_MS', DEFAULTS.hedgeDelayMs),
    /**
     * How webhook deliveries are retried, by the senders either process starts (a worker for a
     * job's workflow, the API or the CLI for a job that has none).
     */
    webhookRetry: webhookRetrySettings(env),
    /** How receivers' names are resolved: bounded, and off libuv's thread pool (webhookNames.ts). */
    webhookNames: webhookNameSettings(env),
  } satisfies Partial<Settings>;
}

/**
 * Every setting a module takes, each from its variable or else its default: the one place a
 * setting left out gets one, for the processes (their config) and for an API or a worker built
 * in process (a test's, a tool's). Only the settings are taken from `given`.
 */
export function withDefaults(given: Partial<Settings> = {}): Settings {
  const settings: Settings = {
    ...sharedSettings({}),
    ...workerSettingsFrom({}),
    ...apiSettingsFrom({}),
  };
  for (const key of Object.keys(settings) as Array<keyof Settings>) {
    const value = given[key];
    if (value !== undefined) Object.assign(settings, { [key]: value });
  }
  return settings;
}

/** Settings every service process reads (the API, the worker). */
export function serviceConfig(env: NodeJS.ProcessEnv = process.env) {
  const targets = webhookTargets(env);
  return {
    ...sharedSettings(env),
    databaseUrl: required(env, 'DATABASE_URL'),
    /** Address, namespace, and TLS or API key for a secured cluster or Temporal Cloud. */
    temporal: temporalConnectionSettings(env),
    /** Require certification of a job's primary provider too (failover always requires it). */
    requireCertifiedPrimary: env.ONEJOB_REQUIRE_CERTIFIED_PRIMARY === 'true',
    /**
     * Bearer token /metrics requires of every caller (the API's, the worker's); without it only
     * loopback callers get it.
     */
    metricsToken: optionalToken(env, 'ONEJOB_METRICS_TOKEN'),
    /** Webhook endpoints on internal networks: allowed, or refused (see webhookTargets). */
    allowInternalWebhookTargets: targets.allowInternal,
    /** Internal hosts and ranges webhooks may reach all the same (ONEJOB_WEBHOOK_ALLOWED_TARGETS). */
    allowedWebhookTargets: targets.allowed,
    /** Webhook endpoints over plain http: allowed, or refused (see webhookAllowance). */
    allowPlainHttpWebhooks: webhookAllowance(env, 'ONEJOB_WEBHOOK_PLAIN_HTTP'),
    /** The keys that seal webhook signing secrets at rest (ONEJOB_SECRET_KEYS, secretSealing.ts). */
    secretKeys: secretKeyRing(env),
    /** Apply the migrations at start, or only check them (a separate step applied them). */
    migrations: migrationMode(env),
  };
}

/** Settings of the worker process. */
export function workerConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    ...serviceConfig(env),
    ...workerSettingsFrom(env),
    hedgeBudget: hedgeBudget(env),
    /** Continuous certification: when a provider loses fallback and hedge eligibility. */
    rejectionRule: rejectionRule(env),
    decertifiedRecheckMs: decertifiedRecheckMs(env),
    /** How soon a held admission is tried again (issue 61, docs/operators.md). */
    admissionHoldRecheckMs: milliseconds(env, 'ONEJOB_ADMISSION_HOLD_RECHECK_MS', 30_000),
    ...workerAddresses(env),
  };
}

/** The settings the worker's modules take (Settings), each from its variable or its default. */
function workerSettingsFrom(env: NodeJS.ProcessEnv) {
  return {
    /** Attempts per job at most: plan, fallbacks and users' "try again" together. */
    maxAttemptsPerJob: positiveInteger(
      env,
      'ONEJOB_MAX_ATTEMPTS_PER_JOB',
      DEFAULTS.maxAttemptsPerJob,
    ),
    /** A job workflow continues-as-new once its history has this many events. */
    historyEventLimit: positiveInteger(
      env,
      'ONEJOB_HISTORY_EVENT_LIMIT',
      DEFAULTS.historyEventLimit,
    ),
    /** The longest wait between two looks at an unknown attempt. */
    reconcileMaxDelayMs: milliseconds(
      env,
      'ONEJOB_RECONCILE_MAX_DELAY_MS',
      DEFAULTS.reconcileMaxDelayMs,
    ),
    /** The wait after the first look at an unknown attempt (it doubles from there). */
    reconcileFirstDelayMs: milliseconds(
      env,
      'ONEJOB_RECONCILE_FIRST_DELAY_MS',
      DEFAULTS.reconcileFirstDelayMs,
    ),
    /** How often a workflow blocked on an unknown attempt looks at it itself. */
    blockedSelfLookMs: milliseconds(env, 'ONEJOB_BLOCKED_SELF_LOOK_MS', DEFAULTS.blockedSelfLookMs),
    /** An attempt unknown this long sends job.needs_operator to its owner's webhooks. */
    needsOperatorAfterMs: milliseconds(
      env,
      'ONEJOB_NEEDS_OPERATOR_AFTER_MS',
      DEFAULTS.needsOperatorAfterMs,
    ),
    /** A webhook delivery waiting this long with no sender gets one (the backstop). */
    webhookStrandedAfterMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_STRANDED_AFTER_MS',
      DEFAULTS.strandedDeliveryAfterMs,
    ),
    /** When a webhook endpoint's breaker opens, and how long it holds (ONEJOB_WEBHOOK_BREAKER_*). */
    webhookBreaker: {
      failures: positiveInteger(
        env,
        'ONEJOB_WEBHOOK_BREAKER_FAILURES',
        DEFAULTS.webhookBreaker.failures,
      ),
      firstHoldMs: milliseconds(
        env,
        'ONEJOB_WEBHOOK_BREAKER_FIRST_HOLD_MS',
        DEFAULTS.webhookBreaker.firstHoldMs,
      ),
      longestHoldMs: milliseconds(
        env,
        'ONEJOB_WEBHOOK_BREAKER_LONGEST_HOLD_MS',
        DEFAULTS.webhookBreaker.longestHoldMs,
      ),
    },
    /** Provider calls one worker process runs at once (their own task queue and slots). */
    maxConcurrentProviderCalls: positiveInteger(
      env,
      'ONEJOB_MAX_CONCURRENT_PROVIDER_CALLS',
      DEFAULTS.maxConcurrentProviderCalls,
    ),
    /**
     * Workflow runs a worker keeps in memory between their tasks; the others are replayed when
     * they next run. Each cached run costs about half a megabyte, so the SDK's own sizing (from
     * the heap) let 1,000 blocked jobs hold 1.2 GB. A blocked run sleeps until a look settles its
     * attempt, so evicting it costs one replay when it wakes; the cache need only hold the runs
     * that are busy.
     */
    maxCachedWorkflows: positiveInteger(
      env,
      'ONEJOB_MAX_CACHED_WORKFLOWS',
      DEFAULTS.maxCachedWorkflows,
    ),
    /** After a shutdown request, how long running provider calls may go on. */
    shutdownForceTimeMs: milliseconds(
      env,
      'ONEJOB_SHUTDOWN_FORCE_TIME_MS',
      DEFAULTS.shutdownForceTimeMs,
    ),
    /**
     * How long a run's next workflow task waits for this worker on its sticky queue before
     * another worker may take it: after a crash, that is how long its runs stand still.
     */
    stickyQueueTimeoutMs: milliseconds(
      env,
      'ONEJOB_STICKY_QUEUE_TIMEOUT_MS',
      DEFAULTS.stickyQueueTimeoutMs,
    ),
    webhookSends: {
      /** Webhook tries this worker has out at once, in all. */
      perProcess: positiveInteger(
        env,
        'ONEJOB_WEBHOOK_SENDS_PER_WORKER',
        DEFAULTS.webhookSendsPerWorker,
      ),
      /** Of those, for any one owner's endpoints. */
      perOwner: positiveInteger(
        env,
        'ONEJOB_WEBHOOK_SENDS_PER_OWNER',
        DEFAULTS.webhookSendsPerOwner,
      ),
    },
  } satisfies Partial<Settings>;
}

/** Where the API listens (HOST, PORT): read by the API and by the container's health check. */
export function apiAddress(env: NodeJS.ProcessEnv = process.env) {
  return { host: env.HOST ?? DEFAULTS.apiHost, port: port(env, 'PORT', DEFAULTS.apiPort) };
}

/** Where a worker listens, each `host:port` or `off`: read by the worker, npm start and the health check. */
export function workerAddresses(env: NodeJS.ProcessEnv = process.env) {
  return {
    /** Where the Temporal SDK's Prometheus metrics are served. */
    metricsAddress: listenAddress(
      env,
      'ONEJOB_WORKER_METRICS_ADDRESS',
      DEFAULTS.workerMetricsAddress,
    ),
    /** Where the worker answers /healthz and /readyz, and serves its own /metrics. */
    healthAddress: listenAddress(env, 'ONEJOB_WORKER_HEALTH_ADDRESS', DEFAULTS.workerHealthAddress),
  };
}

/**
 * What hedging may spend: at most `share` more than the primaries' calls cost, over the last
 * `windowMs`, per primary provider; and no hedge expected to cost more than `maxExtraPerJob`.
 * Unset (no ONEJOB_HEDGE_BUDGET_SHARE and no ONEJOB_HEDGE_MAX_EXTRA_PER_JOB): no budget.
 */
function hedgeBudget(env: NodeJS.ProcessEnv) {
  const share = optionalShare(env, 'ONEJOB_HEDGE_BUDGET_SHARE');
  const maxExtraPerJob = optionalAmount(env, 'ONEJOB_HEDGE_MAX_EXTRA_PER_JOB');
  if (share === undefined && maxExtraPerJob === undefined) return undefined;
  return {
    ...(share === undefined ? {} : { share }),
    ...(maxExtraPerJob === undefined ? {} : { maxExtraPerJob }),
    windowMs: positiveInteger(env, 'ONEJOB_HEDGE_BUDGET_WINDOW_MS', DEFAULTS.hedgeBudgetWindowMs),
    refreshMs: milliseconds(env, 'ONEJOB_HEDGE_BUDGET_REFRESH_MS', DEFAULTS.hedgeBudgetRefreshMs),
  };
}

export function apiConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    ...serviceConfig(env),
    ...apiAddress(env),
    apiTokens: required(env, 'ONEJOB_API_TOKENS'),
    /** Operator tokens (`name:token` pairs); without them the operator routes refuse everyone. */
    operatorTokens: env.ONEJOB_OPERATOR_TOKENS || undefined,
    /** Send `x-onejob-instance` (host:pid) on every response: it names machines, so opt-in. */
    instanceHeader: env.ONEJOB_INSTANCE_HEADER === 'true',
    /** Per-owner limits (docs/configuration.md), on unless set `off`. */
    ownerLimits: ownerLimitSettings(env, startedByDevStack(env)),
    ...apiSettingsFrom(env),
  };
}

/** The settings the API's modules take (Settings), each from its variable or its default. */
function apiSettingsFrom(env: NodeJS.ProcessEnv) {
  return {
    /** `GET /v1/jobs/:id?wait=` requests one owner may hold open at once on one API process. */
    maxWaitsPerOwner: positiveInteger(env, 'ONEJOB_MAX_WAITS_PER_OWNER', DEFAULTS.maxWaitsPerOwner),
    /** Between a `?wait=` request's looks at its job while job endings are heard (ms). */
    waitPollMs: positiveInteger(env, 'ONEJOB_WAIT_POLL_MS', DEFAULTS.waitPollMs),
    /** How old (in seconds) a signed provider callback may be. */
    callbackToleranceS: positiveInteger(
      env,
      'ONEJOB_CALLBACK_TOLERANCE_S',
      DEFAULTS.callbackToleranceS,
    ),
    /** Timeouts and caps of the HTTP server (docs/configuration.md). */
    httpBounds: httpBounds(env),
    /** A `GET /v1/jobs` page that carries inputs or results stops before this many bytes. */
    listPageMaxBytes: positiveInteger(env, 'ONEJOB_LIST_PAGE_MAX_BYTES', DEFAULTS.listPageMaxBytes),
    webhookLimits: webhookLimits(env),
    /** How often the metric deltas are folded when nobody scrapes (not a variable). */
    metricsFoldIntervalMs: DEFAULTS.metricsFoldIntervalMs,
  } satisfies Partial<Settings>;
}

/**
 * ONEJOB_MIGRATIONS: `apply` (unset) migrates at start, under the service's own role; `verify`
 * only checks that a separate step (bin/migrate.js, under the schema owner's role) did, so the
 * services' role needs no right to change the schema.
 */
function migrationMode(env: NodeJS.ProcessEnv): MigrationMode {
  const raw = env.ONEJOB_MIGRATIONS;
  if (raw === undefined || raw === '') return DEFAULTS.migrations;
  if (raw === 'apply' || raw === 'verify') return raw;
  throw new Error(`ONEJOB_MIGRATIONS must be apply or verify, got "${raw}"`);
}

export function sweeperConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    intervalMs: milliseconds(env, 'ONEJOB_SWEEP_INTERVAL_MS', DEFAULTS.sweepIntervalMs),
    /** A job younger than this is left to the API request that is starting its workflow. */
    graceMs: milliseconds(env, 'ONEJOB_SWEEP_GRACE_MS', DEFAULTS.sweepGraceMs),
  };
}
