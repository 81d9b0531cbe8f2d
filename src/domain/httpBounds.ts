/** The longest `GET /v1/jobs/:id?wait=`, which sends nothing on its socket until it ends. */
export const MAX_WAIT_SECONDS = 60;

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

/** Node looks for requests past their time this often; the timeouts are kept to within it. */
export const BOUNDS_CHECK_INTERVAL_MS = 1_000;
