import { DEFAULTS } from '../domain/defaults';
import { MAX_WAIT_SECONDS, type HttpBounds } from '../domain/httpBounds';
import { positiveInteger } from './read';

/** How long and how much any one client may hold of the API: every request ends. */
export function httpBounds(env: NodeJS.ProcessEnv): HttpBounds {
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
