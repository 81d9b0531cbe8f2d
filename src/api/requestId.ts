import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header a request's id travels in, both ways. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What a caller's id may be to be kept as is: visible ASCII, no spaces, at most 128 characters. */
const KEEPABLE = /^[\x21-\x7e]{1,128}$/;

/**
 * A request's id: the caller's own `x-request-id` when it is one we can log and send back as it
 * came, else a new UUID. Logged on every line of the request (`requestId`) and answered in the
 * same header, so one id finds a request in the caller's logs and ours.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && KEEPABLE.test(given) ? given : randomUUID();
}
