import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { DiscardBounds } from './refusedBodies';

/**
 * Makes every close of an API connection a lingering one (RFC 9112, section 9.6). Node closes a
 * connection right after its last answer (the client asked to close, or Node decided to), even
 * while the client is still sending a body: the kernel then answers the unread bytes with a
 * reset, and a reset can destroy the answer before the client has read it. Here the answer and
 * our FIN go out as before, but the connection stays open for reading until the client ends its
 * side, so nothing unread is left behind; a client that keeps sending is cut off after the
 * bounds' time (bytes of a refused body are bounded where it is refused, refusedBodies.ts).
 */
export function lingerBeforeClosing(server: Server, bounds: DiscardBounds): void {
  server.on('connection', (socket: Socket) => {
    // Node's HTTP server calls destroySoon once the connection's last answer is finished.
    socket.destroySoon = () => lingeringClose(socket, bounds);
  });
}

function lingeringClose(socket: Socket, bounds: DiscardBounds): void {
  socket.end();
  if (socket.readableEnded || socket.destroyed) {
    // Nothing more can arrive: close as soon as the answer is out, as Node would.
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
    return;
  }
  const timer = setTimeout(() => socket.destroy(), bounds.maxMs).unref();
  socket.once('close', () => clearTimeout(timer));
  // Once the client has ended its side, nothing is left unread.
  socket.once('end', () => socket.destroy());
  socket.resume();
}
