import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

/** How much of a refused body the API reads and throws away before it cuts the client off. */
export interface DiscardBounds {
  /** Bytes read after the refusal. */
  maxBytes: number;
  /** Time from the refusal to the body's end. */
  maxMs: number;
}

/**
 * Keeps the connection of a request refused before its body has all arrived (a 413 for its size,
 * a 401 before it is read) open, reading the rest of the body and throwing it away, so that a
 * client still uploading it gets the answer rather than a reset. Fastify asks Node to close such a connection as soon as it has answered, and a socket
 * closed with bytes still unread makes the kernel reset the connection: the upload fails, and
 * the answer can be lost before the client reads it (RFC 9112, section 9.6). Once the body has
 * ended the connection takes the next request. A client that sends more than the bounds allow
 * is cut off; that costs it the answer only if it has not read it by then.
 */
export function discardRefusedBody(
  request: FastifyRequest,
  reply: FastifyReply,
  bounds: DiscardBounds,
): void {
  if (request.raw.complete) return;
  // Fastify asks to close; the connection stays open unless the client asked to close it
  // (then the close lingers, lingeringClose.ts, and the answer says so).
  if (reply.raw.shouldKeepAlive) reply.removeHeader('connection');
  discardRestOfBody(request.raw, bounds);
}

/**
 * Reads what is left of a refused request's body and throws it away, up to the bounds; past
 * them the connection is cut. Also for the refusals Node's server makes before Fastify sees the
 * request (protocolRefusals.ts).
 */
export function discardRestOfBody(body: IncomingMessage, bounds: DiscardBounds): void {
  if (body.complete) return;
  const socket = body.socket;
  const cutOff = () => socket.destroy();
  const timer = setTimeout(cutOff, bounds.maxMs).unref();
  let discarded = 0;
  body.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= bounds.maxBytes) return;
    clearTimeout(timer);
    cutOff();
  });
  const stop = (): void => clearTimeout(timer);
  // Removed again at the body's end: a keep-alive connection may carry many refused bodies.
  socket.once('close', stop);
  body.once('end', () => {
    stop();
    socket.removeListener('close', stop);
  });
}
