/** The longest `GET /v1/jobs/:id?wait=`, which sends nothing on its socket until it ends. */
export const MAX_WAIT_SECONDS = 60;

/** A `GET /v1/jobs` page that carries inputs or results stops before this many bytes. */
export const DEFAULT_LIST_PAGE_MAX_BYTES = 1_048_576;

/** How long and how much one client may hold of the API server (see apiConfig for each). */
export interface HttpBounds {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  connectionTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxRequestsPerSocket: number;
  maxConnections: number;
  refusedBodyMaxBytes: number;
  refusedBodyMaxMs: number;
}

/** The defaults of apiConfig, for APIs built without it (tests in this process). */
export const DEFAULT_HTTP_BOUNDS: HttpBounds = {
  requestTimeoutMs: 90_000,
  headersTimeoutMs: 10_000,
  connectionTimeoutMs: 120_000,
  keepAliveTimeoutMs: 72_000,
  maxRequestsPerSocket: 1_000,
  maxConnections: 4_096,
  refusedBodyMaxBytes: 64 * 1024 * 1024,
  refusedBodyMaxMs: 30_000,
};

/** Node looks for requests past their time this often; the timeouts are kept to within it. */
export const BOUNDS_CHECK_INTERVAL_MS = 1_000;
