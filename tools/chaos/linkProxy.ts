import { EventEmitter } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../stack/processes';

/**
 * A TCP proxy on one link between two of our processes (an API and PostgreSQL, a worker and
 * Temporal, …) that can break the link the ways a network does, and heal it, while both ends
 * keep running:
 *
 * - `cut`: every open connection is reset (RST), and every new one is reset as soon as it is
 *   accepted: the far side is gone.
 * - `refuse`: nothing listens on the port any more, so connecting fails at once (the far side's
 *   host is up, its server is not); open connections are dropped too.
 * - `blackhole`: connections are accepted and nothing goes through, either way, until it heals;
 *   the bytes wait, as TCP's retransmissions would deliver them after a partition that ended
 *   before either side gave up. A new connection reaches the far side only after the heal.
 * - `half_open`: the same, in one direction only (`to_server`: requests vanish, or
 *   `to_client`: answers vanish), while the other flows.
 * - `slow`: each chunk is held `latencyMs`, and each direction carries at most
 *   `bytesPerSecond`.
 *
 * The proxy listens on one port for its whole life (apart from `refuse`), so whoever points at it
 * needs no restart after a heal. The port is below the kernel's ephemeral range, so that no
 * outgoing connection takes it while a `refuse` has it closed.
 */
export type LinkFault =
  | { kind: 'cut' }
  | { kind: 'refuse' }
  | { kind: 'blackhole' }
  | { kind: 'half_open'; blocked: Direction }
  | { kind: 'slow'; latencyMs: number; bytesPerSecond?: number };

export type Direction = 'to_server' | 'to_client';

/** What the proxy saw on its link, for a report: connections and bytes each way. */
export interface LinkCounts {
  accepted: number;
  reset: number;
  bytesToServer: number;
  bytesToClient: number;
  /** Bytes read from one side and not yet passed on (held by a fault, or slowed): now, not a total. */
  held: number;
}

export interface LinkProxy {
  /** The port the near side connects to instead of the far side's. */
  port: number;
  /** The fault now in force, if any. */
  readonly fault: LinkFault | undefined;
  /** Breaks the link (replacing any fault already in force). */
  breakWith(fault: LinkFault): Promise<void>;
  /** Lets everything through again; bytes held by a blackhole or a half-open link go on. */
  heal(): Promise<void>;
  counts(): LinkCounts;
  close(): Promise<void>;
}

function blocks(fault: LinkFault | undefined, direction: Direction): boolean {
  if (!fault) return false;
  if (fault.kind === 'blackhole') return true;
  return fault.kind === 'half_open' && fault.blocked === direction;
}

/**
 * One direction of one connection: bytes read from `from` are written to `to`, in order,
 * unless the fault in force holds them (they wait) or slows them (they wait a while).
 */
class Flow {
  private readonly queue: Buffer[] = [];
  private writing = false;
  private ended = false;
  /** When this direction may next send, under a bandwidth limit. */
  private nextFreeAt = 0;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly direction: Direction,
    private readonly link: LinkState,
    private readonly counted: (bytes: number) => void,
    private readonly holding: (bytes: number) => void,
  ) {
    from.on('data', (chunk: Buffer) => {
      this.queue.push(chunk);
      holding(chunk.length);
      // Read no more until this chunk is through: a held link fills the sender's buffers, as
      // a real one would.
      from.pause();
      this.pump();
    });
    from.on('end', () => {
      this.ended = true;
      this.pump();
    });
    link.on('change', () => this.pump());
    // Nothing more goes to a closed socket: what waited for it is no longer held.
    to.on('close', () => {
      for (const chunk of this.queue.splice(0)) holding(-chunk.length);
    });
  }

  private pump(): void {
    if (this.writing || this.to.destroyed) return;
    const fault = this.link.fault;
    if (blocks(fault, this.direction)) return;
    const chunk = this.queue.shift();
    if (!chunk) {
      if (this.ended) this.to.end();
      else this.from.resume();
      return;
    }
    const send = (): void => {
      this.holding(-chunk.length);
      this.counted(chunk.length);
      this.to.write(chunk, () => {
        this.writing = false;
        this.pump();
      });
    };
    this.writing = true;
    if (fault?.kind !== 'slow') return send();
    const now = Date.now();
    const sendAt = Math.max(now + fault.latencyMs, this.nextFreeAt);
    if (fault.bytesPerSecond)
      this.nextFreeAt = sendAt + (chunk.length * 1_000) / fault.bytesPerSecond;
    setTimeout(send, sendAt - now);
  }
}

class LinkState extends EventEmitter {
  fault: LinkFault | undefined;

  set(fault: LinkFault | undefined): void {
    this.fault = fault;
    this.emit('change');
  }
}

export async function startLinkProxy(target: { host: string; port: number }): Promise<LinkProxy> {
  const link = new LinkState();
  // Every flow listens for the link's changes.
  link.setMaxListeners(0);
  const open = new Set<Socket>();
  const counts: LinkCounts = {
    accepted: 0,
    reset: 0,
    bytesToServer: 0,
    bytesToClient: 0,
    held: 0,
  };
  const holding = (bytes: number): void => {
    counts.held += bytes;
  };

  const track = (socket: Socket): void => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const reset = (socket: Socket): void => {
    counts.reset += 1;
    socket.resetAndDestroy();
  };

  const relay = (client: Socket): void => {
    const server = connect(target.port, target.host);
    track(server);
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    new Flow(client, server, 'to_server', link, (n) => (counts.bytesToServer += n), holding);
    new Flow(server, client, 'to_client', link, (n) => (counts.bytesToClient += n), holding);
  };

  const accept = (client: Socket): void => {
    counts.accepted += 1;
    track(client);
    if (link.fault?.kind === 'cut') return reset(client);
    if (link.fault?.kind !== 'blackhole') return relay(client);
    // Blackholed: accepted here, but the far side hears nothing of it until the heal. Nothing
    // reads the client meanwhile, so what it sends waits in its socket.
    const healed = (): void => {
      if (link.fault?.kind === 'blackhole' || client.destroyed) return;
      link.off('change', healed);
      if (link.fault?.kind === 'cut') return reset(client);
      relay(client);
    };
    link.on('change', healed);
    client.on('close', () => link.off('change', healed));
  };

  let server: Server = createServer(accept);
  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const stopListening = (): Promise<void> =>
    new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  // A port below the kernel's ephemeral range (freePort), as test/support/webhookReceiver.ts
  // takes: while a `refuse` has it closed, no outgoing connection of this machine can be given
  // it, so the heal listens on it again. A port from `listen(0)` is in that range.
  let port = 0;
  for (let tries = 0; port === 0; tries += 1) {
    const candidate = await freePort();
    try {
      await listen(candidate);
      port = candidate;
    } catch (error) {
      // Taken between freePort's look and our listen: another.
      server = createServer(accept);
      if (tries >= 20) throw error;
    }
  }

  return {
    port,
    get fault() {
      return link.fault;
    },
    async breakWith(fault) {
      if (fault.kind === 'refuse') {
        link.set(fault);
        for (const socket of [...open]) socket.destroy();
        await stopListening();
        return;
      }
      if (!server.listening) {
        server = createServer(accept);
        await listen(port);
      }
      link.set(fault);
      if (fault.kind === 'cut') for (const socket of [...open]) reset(socket);
    },
    async heal() {
      if (!server.listening) {
        server = createServer(accept);
        await listen(port);
      }
      link.set(undefined);
    },
    counts: () => ({ ...counts }),
    async close() {
      link.set(undefined);
      for (const socket of [...open]) socket.destroy();
      await stopListening();
    },
  };
}
