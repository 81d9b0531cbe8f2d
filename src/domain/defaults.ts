/**
 * Every setting's default, written once. config.ts reads the environment with these as its
 * fallbacks, and a worker or an API built in process (by a test or the benchmark) without a
 * value falls back to the same one, so both run alike. docs/configuration.md names the
 * variables.
 */
export const DEFAULTS = {
  /** The API's address to listen on (HOST). */
  apiHost: '127.0.0.1',
  /** The API's port (PORT). */
  apiPort: 3000,
  /** The job task queue (ONEJOB_TASK_QUEUE); provider calls and webhooks get queues named after it. */
  taskQueue: 'onejob',
  /** A job's mode when its request names none. */
  jobMode: 'exclusive',
  /** Apply the migrations at start (ONEJOB_MIGRATIONS), or only verify them. */
  migrations: 'apply',
  /** Connections of a service process's pool, and how long one is waited for before failing. */
  databasePool: { max: 10, connectionTimeoutMs: 5_000 },
  /** The Temporal frontend's port on 127.0.0.1 when TEMPORAL_ADDRESS is unset. */
  temporalPort: 7233,
  /** The provider simulator's port (SIMULATOR_PORT), where ONEJOB_SIMULATOR_URL points by default. */
  simulatorPort: 4010,
  /** Where a worker serves the Temporal SDK's Prometheus metrics (ONEJOB_WORKER_METRICS_ADDRESS). */
  workerMetricsAddress: '127.0.0.1:9464',
  /** Where a worker answers /healthz and /readyz (ONEJOB_WORKER_HEALTH_ADDRESS). */
  workerHealthAddress: '127.0.0.1:9465',
  /** Hedged jobs: the delay before the fallback starts while the primary's p95 is not known. */
  hedgeDelayMs: 2_000,
  /** Attempts per job at most: plan, fallbacks and users' "try again" together. */
  maxAttemptsPerJob: 16,
  /** A job workflow continues-as-new once its history has this many events. */
  historyEventLimit: 10_000,
  /** The wait after the first look at an unknown attempt (it doubles from there). */
  reconcileFirstDelayMs: 1_000,
  /** The longest wait between two looks at an unknown attempt. */
  reconcileMaxDelayMs: 600_000,
  /**
   * A workflow blocked on an unknown attempt sleeps while the workers' reconciler looks at it,
   * and is woken when it settles; it also looks itself this often, in case a wake-up was lost
   * (Temporal unreachable when the reconciler sent it).
   */
  blockedSelfLookMs: 3_600_000,
  /**
   * Webhook deliveries: the first retry after 5 s, doubling to one every 5 minutes, for 3 days;
   * a receiver down for an hour gets its events within 5 minutes of coming back.
   */
  webhookRetry: {
    initialIntervalMs: 5_000,
    maximumIntervalMs: 300_000,
    giveUpAfterMs: 259_200_000,
  },
  /** Live webhook endpoints one owner may have; a registration past it is refused. */
  webhookEndpointsPerOwner: 20,
  /** Signing secrets live at once on one endpoint (the current one and those rotated out). */
  webhookLiveSecretsPerEndpoint: 5,
  /**
   * An endpoint's breaker: open after 5 tries in a row not answered 2xx, then one probe after
   * 30 s, doubling to one every 30 minutes; a receiver's Retry-After is kept up to that too.
   */
  webhookBreaker: { failures: 5, firstHoldMs: 30_000, longestHoldMs: 1_800_000 },
  /** A webhook receiver's name is given up on after this long (ONEJOB_WEBHOOK_DNS_TIMEOUT_MS). */
  webhookDnsTimeoutMs: 5_000,
  /** Webhook tries one worker process has out at once, for all owners together. */
  webhookSendsPerWorker: 64,
  /** Of those, the tries for any one owner's endpoints. */
  webhookSendsPerOwner: 8,
  /** An attempt unknown this long (or one only an operator can settle) sends job.needs_operator. */
  needsOperatorAfterMs: 900_000,
  /** A delivery waiting this long that no sender holds is handed to a new sender (the backstop). */
  strandedDeliveryAfterMs: 600_000,
  /**
   * A delivery no sender has taken up this long after it was written is handed to one: an
   * ending no workflow was left to hand over (checked this often, too).
   */
  unsentDeliveryAfterMs: 5_000,
  /** How often each worker's reconciler takes the looks at unknown attempts that are due. */
  recheckIntervalMs: 1_000,
  /** Workflow runs one worker keeps cached between their tasks (the rest replay when they run). */
  maxCachedWorkflows: 100,
  /** Provider calls one worker process runs at once (their own task queue and slots). */
  maxConcurrentProviderCalls: 500,
  /** After a shutdown request, how long running provider calls may go on. */
  shutdownForceTimeMs: 30_000,
  /**
   * How long a workflow task waits on a worker's own (sticky) queue before any worker may take
   * it: the SDK's default. After a worker dies, its runs' next tasks wait this long.
   */
  stickyQueueTimeoutMs: 10_000,
  /** The window over which hedging's spend is measured against its budget. */
  hedgeBudgetWindowMs: 3_600_000,
  /** How long one look at that window's spend is reused. */
  hedgeBudgetRefreshMs: 5_000,
  /**
   * Every owner's limits where no setting says otherwise: on in every deployment (issue 55).
   * npm start sizes them for trying things out (devOwnerLimits); `off` lifts one.
   */
  ownerLimits: {
    createsPerSecond: 20,
    createBurst: 100,
    maxOpenJobs: 5_000,
    webhookRequestsPerSecond: 20,
    webhookRequestBurst: 200,
  },
  /** The limits npm start runs with unless set: room for a load test on one machine. */
  devOwnerLimits: {
    createsPerSecond: 200,
    createBurst: 2_000,
    maxOpenJobs: 20_000,
    webhookRequestsPerSecond: 200,
    webhookRequestBurst: 2_000,
  },
  /** A `GET /v1/jobs?status=` page looks at this many of the owner's jobs at most. */
  listStatusScanRows: 10_000,
  /** `?wait=` requests one owner may hold open at once on one API process. */
  maxWaitsPerOwner: 100,
  /** Between a `?wait=` request's looks at its job while job endings are heard. */
  waitPollMs: 5_000,
  /** Tokens a chat provider reserves for its answer, sent as the output cap (maxOutputTokens). */
  maxOutputTokens: 1_024,
  /**
   * After a provider call can no longer land, how long a status lookup's "never processed" is
   * still not believed (a provider config's notFoundGraceMs).
   */
  notFoundGraceMs: 5_000,
  /** How old (in seconds) a signed provider callback may be. */
  callbackToleranceS: 300,
  /** A `GET /v1/jobs` page that carries inputs or results stops before this many bytes. */
  listPageMaxBytes: 1_048_576,
  /** How long a readiness check waits for PostgreSQL and for Temporal before it calls one down. */
  readinessTimeoutMs: 2_000,
  /** How often the API folds its metric deltas when nobody scrapes. */
  metricsFoldIntervalMs: 60_000,
  /** How long and how much one client may hold of the API server (apiConfig says each). */
  httpBounds: {
    requestTimeoutMs: 90_000,
    headersTimeoutMs: 10_000,
    connectionTimeoutMs: 120_000,
    keepAliveTimeoutMs: 72_000,
    maxRequestsPerSocket: 1_000,
    maxConnections: 4_096,
    refusedBodyMaxBytes: 64 * 1024 * 1024,
    refusedBodyMaxMs: 30_000,
  },
  /**
   * How long a create that inserted a job is trusted to start its workflow: meanwhile its
   * duplicates answer from the row without calling Temporal; after it, the next one starts it.
   */
  startLeaseMs: 10_000,
  /** Jobs (or attempts) one sweeper pass reads at a time. */
  sweepBatchSize: 100,
  /** How often each worker's sweeper runs. */
  sweepIntervalMs: 60_000,
  /** A job younger than this is left to the API request that is starting its workflow. */
  sweepGraceMs: 30_000,
} as const;
