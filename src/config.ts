import { isIP } from 'node:net';
import type { MigrationMode } from './db/migrate';
import { DEFAULTS } from './domain/defaults';
import { MAX_WAIT_SECONDS, type HttpBounds } from './domain/httpBounds';
import { ownerLimitSettings } from './domain/ownerLimits';
import { startedByDevStack } from './domain/publishedSecrets';
import { secretKeyRing } from './domain/secretSealing';
import type { WebhookNameSettings, WebhookRetry } from './domain/webhooks';
import { parseAllowedTargets, type AllowedTargets } from './service/webhookTargets';
import { temporalConnectionSettings } from './temporal/connection';

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** A port number from `name`, or `fallback` when it is unset; a one-line error otherwise. */
export function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535)
    throw new Error(`${name} must be a port number, got "${raw}"`);
  return value;
}

/** A listening address, `host:port`, split; a one-line error naming `variable` otherwise. */
export function hostAndPort(address: string, variable: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const port = Number(address.slice(at + 1));
  if (at < 0 || address.slice(at + 1) === '' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${variable} must be host:port or off, got "${address}"`);
  return { host: address.slice(0, at).replace(/^\[|\]$/g, '') || '127.0.0.1', port };
}

/**
 * A webhook safeguard's setting, `allow` or `deny`; unset, only processes npm start started
 * allow it (a receiver on this machine is how one tries webhooks out):
 * ONEJOB_WEBHOOK_INTERNAL_TARGETS, receivers on internal networks (loopback, private,
 * link-local); ONEJOB_WEBHOOK_PLAIN_HTTP, receivers over plain http (an event is signed but
 * readable, so elsewhere it goes over https only).
 */
function webhookAllowance(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return startedByDevStack(env);
  if (raw === 'allow' || raw === 'deny') return raw === 'allow';
  throw new Error(`${name} must be allow or deny, got "${raw}"`);
}

/**
 * ONEJOB_WEBHOOK_ALLOWED_TARGETS, and with it ONEJOB_WEBHOOK_INTERNAL_TARGETS: the listed
 * internal hosts and ranges are let through and the rest of the internal networks refused, so
 * a list beside `allow` (which lets every one through) says two things at once.
 */
function webhookTargets(env: NodeJS.ProcessEnv): {
  allowInternal: boolean;
  allowed: AllowedTargets;
} {
  const variable = 'ONEJOB_WEBHOOK_ALLOWED_TARGETS';
  const allowed = parseAllowedTargets(env[variable] ?? '', variable);
  const listed = allowed.names.length + allowed.ranges.length > 0;
  const allowInternal = webhookAllowance(env, 'ONEJOB_WEBHOOK_INTERNAL_TARGETS');
  if (listed && env.ONEJOB_WEBHOOK_INTERNAL_TARGETS === 'allow')
    throw new Error(
      `${variable} lets chosen internal targets through, but ONEJOB_WEBHOOK_INTERNAL_TARGETS=allow lets every one through: unset one of them`,
    );
  return { allowInternal: allowInternal && !listed, allowed };
}

/** `host:port` from `name` (checked), `fallback` when unset, or `off`. */
function listenAddress(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'off') hostAndPort(raw, name);
  return raw;
}

function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be milliseconds, got "${raw}"`);
  return value;
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number of at least 1, got "${raw}"`);
  return value;
}

/** A share such as 0.1 (10 %), or undefined when the variable is unset. */
function optionalShare(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 100)
    throw new Error(`${name} must be a share such as 0.1 (10 %), got "${raw}"`);
  return value;
}

/** A non-negative amount of money, or undefined when the variable is unset. */
function optionalAmount(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be an amount of money such as 0.05, got "${raw}"`);
  return value;
}

function optionalToken(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\S{8,}$/.test(value))
    throw new Error(`${name} must be at least 8 characters without spaces`);
  return value;
}

/** ONEJOB_TASK_QUEUE: the job task queue the services (and the CLI) use. */
export function taskQueueSetting(env: NodeJS.ProcessEnv = process.env): string {
  return env.ONEJOB_TASK_QUEUE ?? DEFAULTS.taskQueue;
}

/** Settings every service process reads (the API, the worker). */
export function serviceConfig(env: NodeJS.ProcessEnv = process.env) {
  const targets = webhookTargets(env);
  return {
    databaseUrl: required(env, 'DATABASE_URL'),
    /** Address, namespace, and TLS or API key for a secured cluster or Temporal Cloud. */
    temporal: temporalConnectionSettings(env),
    taskQueue: taskQueueSetting(env),
    /** Hedged jobs: the delay before the fallback starts while the primary's p95 is not known. */
    hedgeDelayMs: milliseconds(env, 'ONEJOB_HEDGE_DELAY_MS', DEFAULTS.hedgeDelayMs),
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
    /**
     * How webhook deliveries are retried, by the senders either process starts (a worker for a
     * job's workflow, the API or the CLI for a job that has none).
     */
    webhookRetry: webhookRetrySettings(env),
    /** The keys that seal webhook signing secrets at rest (ONEJOB_SECRET_KEYS, secretSealing.ts). */
    secretKeys: secretKeyRing(env),
    /** Apply the migrations at start, or only check them (a separate step applied them). */
    migrations: migrationMode(env),
    /** How receivers' names are resolved: bounded, and off libuv's thread pool (webhookNames.ts). */
    webhookNames: webhookNameSettings(env),
  };
}

/** ONEJOB_WEBHOOK_DNS_SERVERS (comma-separated host or host:port) and ONEJOB_WEBHOOK_DNS_TIMEOUT_MS. */
function webhookNameSettings(env: NodeJS.ProcessEnv): WebhookNameSettings {
  const timeoutMs = milliseconds(
    env,
    'ONEJOB_WEBHOOK_DNS_TIMEOUT_MS',
    DEFAULTS.webhookDnsTimeoutMs,
  );
  if (timeoutMs < 100 || timeoutMs > 30_000)
    throw new Error(`ONEJOB_WEBHOOK_DNS_TIMEOUT_MS must be 100 to 30000, got "${timeoutMs}"`);
  const raw = env.ONEJOB_WEBHOOK_DNS_SERVERS;
  if (raw === undefined || raw === '') return { timeoutMs };
  const servers = raw.split(',').map((server) => server.trim());
  for (const server of servers) {
    const host = server.replace(/^\[(.*)\](:\d+)?$/, '$1').replace(/^([^:]+):\d+$/, '$1');
    if (isIP(host) === 0)
      throw new Error(
        `ONEJOB_WEBHOOK_DNS_SERVERS must list IP addresses (with :port if not 53), got "${server}"`,
      );
  }
  return { servers, timeoutMs };
}

/** How webhook deliveries are retried: first wait, longest wait, and when to give up. */
export function webhookRetrySettings(env: NodeJS.ProcessEnv = process.env): WebhookRetry {
  return {
    initialIntervalMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_FIRST_RETRY_MS',
      DEFAULTS.webhookRetry.initialIntervalMs,
    ),
    maximumIntervalMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS',
      DEFAULTS.webhookRetry.maximumIntervalMs,
    ),
    giveUpAfterMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_GIVE_UP_AFTER_MS',
      DEFAULTS.webhookRetry.giveUpAfterMs,
    ),
  };
}

/** Settings of the worker process. */
export function workerConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    ...serviceConfig(env),
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
    hedgeBudget: hedgeBudget(env),
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
    ...workerAddresses(env),
  };
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
    host: env.HOST ?? DEFAULTS.apiHost,
    port: port(env, 'PORT', DEFAULTS.apiPort),
    apiTokens: required(env, 'ONEJOB_API_TOKENS'),
    /** Operator tokens (`name:token` pairs); without them the operator routes refuse everyone. */
    operatorTokens: env.ONEJOB_OPERATOR_TOKENS || undefined,
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
    /** Send `x-onejob-instance` (host:pid) on every response: it names machines, so opt-in. */
    instanceHeader: env.ONEJOB_INSTANCE_HEADER === 'true',
    /** Timeouts and caps of the HTTP server (docs/configuration.md). */
    httpBounds: httpBounds(env),
    /** Per-owner limits (docs/configuration.md), on unless set `off`. */
    ownerLimits: ownerLimitSettings(env, startedByDevStack(env)),
    /** A `GET /v1/jobs` page that carries inputs or results stops before this many bytes. */
    listPageMaxBytes: positiveInteger(env, 'ONEJOB_LIST_PAGE_MAX_BYTES', DEFAULTS.listPageMaxBytes),
    webhookLimits: webhookLimits(env),
  };
}

/**
 * ONEJOB_MIGRATIONS: `apply` (unset) migrates at start, under the service's own role; `verify`
 * only checks that a separate step (bin/migrate.js, under the schema owner's role) did, so the
 * services' role needs no right to change the schema.
 */
function migrationMode(env: NodeJS.ProcessEnv): MigrationMode {
  const raw = env.ONEJOB_MIGRATIONS;
  if (raw === undefined || raw === '') return 'apply';
  if (raw === 'apply' || raw === 'verify') return raw;
  throw new Error(`ONEJOB_MIGRATIONS must be apply or verify, got "${raw}"`);
}

/** What one owner may register of webhooks (docs/configuration.md). */
function webhookLimits(env: NodeJS.ProcessEnv) {
  const liveSecretsPerEndpoint = positiveInteger(
    env,
    'ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT',
    DEFAULTS.webhookLiveSecretsPerEndpoint,
  );
  // The current secret and the one a rotation replaces: fewer would make rotations gap.
  if (liveSecretsPerEndpoint < 2)
    throw new Error(
      `ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT must be at least 2 (the current secret and the one a rotation replaces), got "${env.ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT}"`,
    );
  return {
    endpointsPerOwner: positiveInteger(
      env,
      'ONEJOB_WEBHOOK_ENDPOINTS_PER_OWNER',
      DEFAULTS.webhookEndpointsPerOwner,
    ),
    liveSecretsPerEndpoint,
  };
}

/** How long and how much any one client may hold of the API: every request ends. */
function httpBounds(env: NodeJS.ProcessEnv): HttpBounds {
  const d = DEFAULTS.httpBounds;
  const bounds = {
    /** Receiving a whole request, headers and body, from its first byte (ms); then 408. */
    requestTimeoutMs: positiveInteger(env, 'ONEJOB_REQUEST_TIMEOUT_MS', d.requestTimeoutMs),
    /** Receiving a request's headers (ms); then 408. */
    headersTimeoutMs: positiveInteger(env, 'ONEJOB_HEADERS_TIMEOUT_MS', d.headersTimeoutMs),
    /** A connection on which nothing moves this long is closed (ms); a wait is silent. */
    connectionTimeoutMs: positiveInteger(
      env,
      'ONEJOB_CONNECTION_TIMEOUT_MS',
      d.connectionTimeoutMs,
    ),
    /** An idle keep-alive connection is closed after this long (ms). */
    keepAliveTimeoutMs: positiveInteger(env, 'ONEJOB_KEEP_ALIVE_TIMEOUT_MS', d.keepAliveTimeoutMs),
    /** Requests on one connection before the API closes it. */
    maxRequestsPerSocket: positiveInteger(
      env,
      'ONEJOB_MAX_REQUESTS_PER_SOCKET',
      d.maxRequestsPerSocket,
    ),
    /** Open connections at once; more are closed as they arrive. */
    maxConnections: positiveInteger(env, 'ONEJOB_MAX_CONNECTIONS', d.maxConnections),
    /** The rest of a refused body read and thrown away, at most: bytes, then ms from the refusal. */
    refusedBodyMaxBytes: positiveInteger(
      env,
      'ONEJOB_REFUSED_BODY_MAX_BYTES',
      d.refusedBodyMaxBytes,
    ),
    refusedBodyMaxMs: positiveInteger(env, 'ONEJOB_REFUSED_BODY_MAX_MS', d.refusedBodyMaxMs),
  };
  // Node refuses a headers timeout above the request timeout.
  if (bounds.headersTimeoutMs > bounds.requestTimeoutMs)
    throw new Error('ONEJOB_HEADERS_TIMEOUT_MS may not exceed ONEJOB_REQUEST_TIMEOUT_MS');
  // A ?wait= sends nothing until it ends: a shorter idle cut would break every long wait.
  if (bounds.connectionTimeoutMs <= MAX_WAIT_SECONDS * 1000)
    throw new Error(
      `ONEJOB_CONNECTION_TIMEOUT_MS must exceed the longest ?wait= (${MAX_WAIT_SECONDS * 1000} ms)`,
    );
  return bounds;
}

export function sweeperConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    intervalMs: milliseconds(env, 'ONEJOB_SWEEP_INTERVAL_MS', DEFAULTS.sweepIntervalMs),
    /** A job younger than this is left to the API request that is starting its workflow. */
    graceMs: milliseconds(env, 'ONEJOB_SWEEP_GRACE_MS', DEFAULTS.sweepGraceMs),
  };
}
