/** What a problem's details (its extensions) say, as the answer's headers read them. */
type ProblemDetails = Readonly<Record<string, unknown>>;

/** One problem type: its status, its title, and when the client should ask again. */
interface ProblemRow {
  status: number;
  title: string;
  /**
   * The answer's Retry-After, in seconds: fixed, or read from the problem's own details. Absent:
   * the answer has none.
   */
  retryAfter?: number | ((details: ProblemDetails) => number);
  /** False: the answer says `x-should-retry: false` (the same request again cannot succeed). */
  shouldRetry?: false;
}

/** Seconds until an instant the details name (at least 1: "now" is no pace at all). */
function secondsUntil(instant: unknown): number {
  return Math.max(1, Math.ceil((Date.parse(String(instant)) - Date.now()) / 1000));
}

/**
 * Every problem type the API can answer with (RFC 9457): its HTTP status and its title. The
 * API renders them (api/problems.ts), the service layer raises them (ServiceError), and each
 * typed failure of the workflow names the one it is answered with (failures.ts).
 */
export const PROBLEM_TYPES = {
  unauthorized: { status: 401, title: 'Missing or invalid API token' },
  'not-found': { status: 404, title: 'Not found' },
  'validation-error': { status: 400, title: 'The request is not valid' },
  'malformed-request': { status: 400, title: 'The HTTP request is malformed' },
  'headers-too-large': { status: 431, title: 'The request headers are too large' },
  'request-timeout': { status: 408, title: 'The request did not arrive in time' },
  'uri-too-long': { status: 414, title: 'A path segment of the URL is too long' },
  'expectation-failed': { status: 417, title: 'Only Expect: 100-continue is supported' },
  'invalid-cursor': { status: 400, title: 'The page cursor is not valid' },
  'malformed-body': { status: 400, title: 'The request body is not valid JSON' },
  'unsupported-media-type': { status: 415, title: 'Send application/json' },
  'body-too-large': { status: 413, title: 'The request body is too large' },
  'idempotency-key-missing': { status: 400, title: 'The Idempotency-Key header is required' },
  'idempotency-key-invalid': { status: 400, title: 'The Idempotency-Key header is malformed' },
  'idempotency-key-reuse': {
    status: 409,
    title: 'Idempotency-Key already used for a different request',
    shouldRetry: false,
  },
  'unknown-job-type': { status: 400, title: 'Unknown job type' },
  'invalid-input': { status: 400, title: 'The job input is not valid' },
  'unknown-provider': { status: 400, title: 'Unknown provider' },
  'incompatible-provider': { status: 400, title: 'The provider cannot run this job type' },
  'attempt-in-flight': {
    status: 409,
    title: 'An attempt of this job is still in flight',
    // An unknown attempt takes reconciliation (a minute or more); a running one, about its timeout.
    retryAfter: (details) => (blockingState(details) === 'unknown' ? 60 : 5),
  },
  'job-terminal': { status: 409, title: 'The job has already ended' },
  'job-not-ended': { status: 409, title: 'Only the key of a job that has ended can be released' },
  'key-already-released': { status: 409, title: 'The key of this job was released already' },
  'attempt-may-take-effect': {
    status: 409,
    title: 'An attempt of this job may still take effect, so its key cannot be released',
  },
  'no-certified-provider': {
    status: 422,
    title: 'No provider certified for this contract is left to fail over to',
  },
  'attempt-not-resolvable': { status: 409, title: 'Only an unknown attempt can be resolved' },
  'provider-not-certified': {
    status: 409,
    title: 'The provider is not certified for the contract in force',
  },
  'attempt-limit-reached': { status: 409, title: 'The job has had as many attempts as it may' },
  'provider-unavailable': {
    status: 409,
    title: 'The provider takes no new attempt now: it cools down or its circuit breaker is open',
    // The provider's cooldown or breaker decides; a few seconds paces a client that asks again.
    retryAfter: 5,
  },
  'too-many-waits': {
    status: 429,
    title: 'Too many requests waiting on jobs at once for this owner',
    retryAfter: 1,
  },
  'create-rate-limited': {
    status: 429,
    title: 'This owner is creating jobs faster than it may; retry after Retry-After seconds',
    retryAfter: (details) => Number(details.retryAfterSeconds),
  },
  'webhook-rate-limited': {
    status: 429,
    title:
      'This owner is calling the webhook routes faster than it may; retry after Retry-After seconds',
    retryAfter: (details) => Number(details.retryAfterSeconds),
  },
  'too-many-open-jobs': {
    status: 429,
    title: 'This owner has as many jobs open at once as it may',
  },
  'too-many-webhook-endpoints': {
    status: 409,
    title: 'This owner has as many webhook endpoints as it may: delete one first',
  },
  'too-many-live-secrets': {
    status: 409,
    title:
      'This endpoint has as many live signing secrets as it may: rotate again once the oldest replaced one expires',
    retryAfter: (details) => secondsUntil(details.nextExpiresAt),
  },
  'delivery-pending': {
    status: 409,
    title: 'The delivery is still being sent, or a redelivery of it waits',
  },
  'endpoint-disabled': {
    status: 409,
    title: 'The endpoint is disabled: nothing is sent to it',
  },
  'endpoint-disabled-by-operator': {
    status: 409,
    title: 'An operator disabled this webhook endpoint: only an operator can enable it',
  },
  'service-unavailable': {
    status: 503,
    title: 'A service onejob depends on (PostgreSQL or Temporal) is unavailable',
    // A dependency back, or a job's workflow between runs taken up by the sweeper: seconds.
    retryAfter: 5,
  },
  'workflow-start-refused': {
    status: 503,
    title: 'The workflow engine refused to start the job',
    // An operator has to act: the client's retries are paced slowly.
    retryAfter: 30,
  },
  'workflow-paused': {
    status: 409,
    title: "The job's workflow is paused in Temporal; unpause it, then send the request again",
    // Only an operator's unpause clears it: the client's retries are paced slowly.
    retryAfter: 30,
  },
  forbidden: { status: 403, title: 'Operator token required' },
  'bad-signature': { status: 401, title: 'The callback signature does not match' },
  'budget-exceeded': {
    status: 402,
    title: "The owner's budget has no room for what this job may cost",
    // The same request cannot fit until the period turns or an operator raises the budget.
    shouldRetry: false,
  },
  'budget-currency-fixed': {
    status: 409,
    title: 'A budget keeps its currency: remove it before setting one in another',
  },
  'hedging-not-allowed': { status: 400, title: 'Hedged mode is not allowed for this job' },
  internal: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, ProblemRow>;

export type ProblemType = keyof typeof PROBLEM_TYPES;

/** The state of the attempt an in-flight refusal names as blocking, if it names one. */
function blockingState(details: ProblemDetails): unknown {
  const blocking = details.blockingAttempt;
  return typeof blocking === 'object' && blocking !== null && 'state' in blocking
    ? blocking.state
    : undefined;
}

/**
 * The headers an answer of this type carries about trying again (Retry-After, x-should-retry),
 * from its row and its details: the one place they are set.
 */
export function retryHeaders(
  type: ProblemType,
  details: ProblemDetails = {},
): Record<string, string> {
  const { retryAfter, shouldRetry }: ProblemRow = PROBLEM_TYPES[type];
  return {
    ...(shouldRetry === false ? { 'x-should-retry': 'false' } : {}),
    ...(retryAfter === undefined
      ? {}
      : {
          'retry-after': String(typeof retryAfter === 'number' ? retryAfter : retryAfter(details)),
        }),
  };
}

export function isProblemType(value: string): value is ProblemType {
  return Object.hasOwn(PROBLEM_TYPES, value);
}

/** Problem types are relative URIs served by the API itself (GET /problems/<type>). */
export function problemTypeUri(type: ProblemType): string {
  return `/problems/${type}`;
}

/** A problem document outside Fastify: its status, headers and body. */
export function standaloneProblem(
  type: ProblemType,
  detail: string,
  extensions: Record<string, unknown> = {},
): { status: number; headers: Record<string, string>; body: string } {
  const { status, title } = PROBLEM_TYPES[type];
  const body = JSON.stringify({ type: problemTypeUri(type), title, status, detail, ...extensions });
  return {
    status,
    headers: {
      'Content-Type': 'application/problem+json',
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
      ...retryHeaders(type, extensions),
    },
    body,
  };
}
