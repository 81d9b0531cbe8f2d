import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { startLinkProxy, type LinkProxy } from '../tools/chaos/linkProxy';
import { ephemeralPortRange } from '../tools/stack/processes';
import { postgresAddress, throughPort } from './support/database';
import { harness } from './support/harness';
import { eventually } from './support/polling';

/**
 * The campaign's partitions are only as true as the proxy that makes them: each fault must do to
 * a real TCP peer what the network would (reset, refuse, swallow, one way only, slow), and a heal
 * must bring the link back on the same port with nothing lost that TCP would have delivered.
 */

let echo: Server;
let echoPort: number;
/** Everything the echo server has received, in order. */
let received: string;
const echoSockets = new Set<Socket>();
let proxy: LinkProxy;

const waitFor = (holds: () => boolean): Promise<boolean> =>
  eventually(async () => holds(), Boolean, 10_000);

beforeEach(async () => {
  received = '';
  echo = createServer((socket) => {
    echoSockets.add(socket);
    socket.on('data', (chunk) => {
      received += chunk.toString();
      socket.write(chunk);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as AddressInfo).port;
  proxy = await startLinkProxy({ host: '127.0.0.1', port: echoPort });
});

afterEach(async () => {
  await proxy.close();
  for (const socket of echoSockets) socket.destroy();
  echoSockets.clear();
  await new Promise((resolve) => echo.close(resolve));
});

/** A connection through the proxy, with everything it has read and how it ended. */
function client(): { socket: Socket; text: () => string; failure: Promise<NodeJS.ErrnoException> } {
  const socket = connect(proxy.port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString()));
  const failure = new Promise<NodeJS.ErrnoException>((resolve) => socket.on('error', resolve));
  return { socket, text: () => text, failure };
}

const connected = (socket: Socket): Promise<void> =>
  new Promise((resolve) =>
    socket.readyState === 'open' ? resolve() : socket.once('connect', resolve),
  );

test('an open link carries both ways and counts what it carried', async () => {
  const c = client();
  c.socket.write('hello');
  await waitFor(() => c.text() === 'hello');
  expect(proxy.counts()).toMatchObject({ accepted: 1, bytesToServer: 5, bytesToClient: 5 });
  c.socket.destroy();
});

test('a cut resets the open connections and every new one, and a heal reopens the same port', async () => {
  const open = client();
  open.socket.write('a');
  await waitFor(() => open.text() === 'a');
  await proxy.breakWith({ kind: 'cut' });
  expect((await open.failure).code).toBe('ECONNRESET');
  const refused = client();
  expect((await refused.failure).code).toBe('ECONNRESET');
  await proxy.heal();
  const healed = client();
  healed.socket.write('b');
  await waitFor(() => healed.text() === 'b');
  healed.socket.destroy();
});

test('a refusing link has nothing listening, and listens again on the same port when healed', async () => {
  await proxy.breakWith({ kind: 'refuse' });
  expect((await client().failure).code).toBe('ECONNREFUSED');
  await proxy.heal();
  const healed = client();
  healed.socket.write('c');
  await waitFor(() => healed.text() === 'c');
  healed.socket.destroy();
});

test("a proxy listens outside the kernel's ephemeral range, so no outgoing connection can be given its port while a refuse has it closed (the heal needs it back)", () => {
  const [low, high] = ephemeralPortRange();
  expect(proxy.port < low || proxy.port > high).toBe(true);
});

test('a blackhole accepts connections and carries nothing until it heals, then delivers what waited', async () => {
  const open = client();
  open.socket.write('before');
  await waitFor(() => open.text() === 'before');
  await proxy.breakWith({ kind: 'blackhole' });
  const fresh = client();
  await connected(fresh.socket);
  open.socket.write('during');
  fresh.socket.write('new');
  // The open connection's bytes reach the proxy and wait there; the new connection is not
  // passed on at all.
  await waitFor(() => proxy.counts().accepted === 2 && proxy.counts().held === 'during'.length);
  expect(received).toBe('before');
  expect(proxy.counts().bytesToServer).toBe('before'.length);
  await proxy.heal();
  await waitFor(() => open.text() === 'beforeduring' && fresh.text() === 'new');
  open.socket.destroy();
  fresh.socket.destroy();
});

test('a half-open link carries one direction only: the request arrives, its answer waits for the heal', async () => {
  const c = client();
  await connected(c.socket);
  await proxy.breakWith({ kind: 'half_open', blocked: 'to_client' });
  c.socket.write('ping');
  // The request arrived; its answer is back at the proxy and waits there.
  await waitFor(() => received === 'ping' && proxy.counts().held === 'ping'.length);
  expect(c.text()).toBe('');
  await proxy.heal();
  await waitFor(() => c.text() === 'ping');
  c.socket.destroy();
});

test('a slow link holds each chunk for its latency, each way', async () => {
  await proxy.breakWith({ kind: 'slow', latencyMs: 150 });
  const c = client();
  await connected(c.socket);
  const sent = Date.now();
  c.socket.write('x');
  await waitFor(() => c.text() === 'x');
  expect(Date.now() - sent).toBeGreaterThanOrEqual(2 * 150);
  c.socket.destroy();
});

test('a PostgreSQL query sent into a blackhole is answered after the heal, on the same connection', async () => {
  const link = await startLinkProxy(postgresAddress());
  const db = new pg.Client({
    connectionString: throughPort(harness().adminDatabaseUrl, link.port),
  });
  await db.connect();
  try {
    const carried = link.counts().bytesToServer;
    await link.breakWith({ kind: 'blackhole' });
    const answer = db.query<{ n: number }>('SELECT 41 + 1 AS n');
    await waitFor(() => link.counts().held > 0);
    expect(link.counts().bytesToServer).toBe(carried);
    await link.heal();
    expect((await answer).rows[0]!.n).toBe(42);
  } finally {
    await db.end();
    await link.close();
  }
});
