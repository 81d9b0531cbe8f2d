import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hammer, httpSummary, newMeasurement } from '../bench/support/load';

/**
 * The benchmark's `unexpected` tally (bench/support/load.ts), which test/benchmarkSmoke.test.ts
 * requires to be empty in every row, can be anything but empty: a server planted with wrong
 * answers (another status, a dropped connection) among the expected ones is measured as the
 * rows measure ours, and each wrong answer is counted, by what it was, in the report's details.
 */

let server: Server;
let url: string;
/** What the server did, request by request: the planted answers are the 2nd, 3rd and 5th. */
const sent: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const n = sent.length + 1;
      if (n === 5) {
        sent.push('dropped');
        req.socket.destroy();
        return;
      }
      const status = n === 2 ? 500 : n === 3 ? 409 : 201;
      sent.push(String(status));
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/jobs`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('a row counts every answer other than the status it expects, and every dropped request, by what it was', async () => {
  const measured = newMeasurement();
  await hammer(
    {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      key: () => 'k',
      expectedStatus: 201,
    },
    1,
    1,
    measured,
  );
  // The planted answers were made (the server answered past them), and each was counted once.
  expect(sent.slice(0, 5)).toEqual(['201', '500', '409', '201', 'dropped']);
  const { unexpected } = httpSummary(measured) as { unexpected: Record<string, number> };
  // A dropped connection gets no answer and no error from autocannon, which opens another:
  // counted from the requests it sent.
  expect(unexpected).toEqual({ '500': 1, '409': 1, 'no answer (connection closed)': 1 });
  // The expected answers are not in it, however many there were.
  expect(sent.filter((s) => s === '201').length).toBeGreaterThan(2);
});
