import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A webhook receiver that takes every request and never answers, until it hangs up: the
 * receiver an abusive owner points its endpoints at (the webhook isolation test and bench row).
 */
export class SilentReceiver {
  private readonly sockets = new Set<Socket>();
  /** Requests it was sent. */
  requests = 0;
  /** Connections held open at once, at most. */
  mostOpen = 0;
  private constructor(private readonly server: Server) {}

  static async start(): Promise<SilentReceiver> {
    const silent = new SilentReceiver(createServer());
    silent.server.on('request', () => (silent.requests += 1));
    silent.server.on('connection', (socket: Socket) => {
      silent.sockets.add(socket);
      silent.mostOpen = Math.max(silent.mostOpen, silent.sockets.size);
      socket.on('close', () => silent.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.server.listen(0, '127.0.0.1', resolve));
    return silent;
  }

  /** Connections held open now. */
  get open(): number {
    return this.sockets.size;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/${path}`;
  }

  /** Drops every connection held: the tries waiting on them fail at once. */
  hangUp(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    this.hangUp();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
