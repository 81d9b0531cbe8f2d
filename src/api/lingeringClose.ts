import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { DiscardBounds } from './refusedBodies';

/**
 * Makes the close of an API connection whose request has not all arrived a lingering one (RFC
 * 9112, section 9.6). Node closes a connection right after its last answer (the client asked to
 * close, or Node decided to), even while the client is still sending a body: the kernel then
 * answers the unread bytes with a reset, and a reset can destroy the answer before the client
 * has read it. Here the answer and our FIN go out as before, but the connection stays open for
 * reading until the client ends its side, so nothing unread is left behind; a client that keeps
 * sending is cut off after the bounds' time (its bytes still pass through the request's parser,
 * and are bounded where the request is refused, refusedBodies.ts). A connection whose request has
 * all arrived closes as before.
 */
export function lingerBeforeClosing(server: Server, bounds: DiscardBounds): void {
  const lastRequest = new WeakMap<Socket, IncomingMessage>();
  const remember = (request: IncomingMessage) => lastRequest.set(request.socket, request);
  // Before Fastify's listener: an answer it sends at once must find its request here. A
  // request with an Expect other than 100-continue never reaches 'request'; its 417 is made
  // on 'checkExpectation' (protocolRefusals.ts).
  server.prependListener('request', remember);
  server.prependListener('checkExpectation', remember);
  server.on('connection', (socket: Socket) => {
    const closeAtOnce = socket.destroySoon.bind(socket);
    // Node's HTTP server calls destroySoon once the connection's last answer is finished.
    socket.destroySoon = () => {
      if (lastRequest.get(socket)?.complete === false) lingeringClose(socket, bounds, closeAtOnce);
      else closeAtOnce();
    };
  });
}

/** `closeAtOnce` is Node's own close: the FIN after what is written, then the socket freed. */
function lingeringClose(socket: Socket, bounds: DiscardBounds, closeAtOnce: () => void): void {
  socket.end();
  // Once the client has ended its side, nothing is left unread.
  if (socket.readableEnded) return closeAtOnce();
  const timer = setTimeout(() => socket.destroy(), bounds.maxMs).unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', closeAtOnce);
  socket.resume();
}

/**
 * Writes the answer to a request Node's parser refused (clientError) and closes lingering. No
 * request exists to bound what follows, and Node goes on feeding the dead parser (each chunk a
 * clientError again), so the bytes are counted here: past the bounds the client is cut off.
 */
export function answerAndCloseLingering(
  socket: Socket,
  answer: string,
  bounds: DiscardBounds,
): void {
  const closeAtOnce = () => socket.destroy();
  let discarded = 0;
  socket.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bounds.maxBytes) closeAtOnce();
  });
  socket.write(answer);
  lingeringClose(socket, bounds, closeAtOnce);
}
