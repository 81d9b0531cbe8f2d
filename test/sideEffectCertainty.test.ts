import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ProviderConfig } from '../src/providers/provider';
import { chargeBody, createJob, operator, readJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { effectsFor, requestsFor } from './support/providerLedger';
import {
  anthropicProvider,
  chatProvider,
  payProvider,
  TIMES_OUT_SOON_MS,
} from './support/providers';
import { certifyForSetup, startTestStack, type TestStack } from './support/stack';
import { workflowStatus } from './support/temporal';

/**
 * What an answer proves. A provider with side effects that answered success has (probably)
 * done the work, whatever its body says; a call without side effects that has ended has nothing
 * left to wait for; and only a "nothing was sent" error lets a charge fail over.
 */

/** A host that accepts TCP connections and then says nothing: a TLS handshake never completes. */
let silentHost: TcpServer;
const silentBytes: Buffer[] = [];
/** A status endpoint that answers 404 with an HTML page, as a proxy in front of a wrong path would. */
let htmlStatus: Server;

const portOf = (server: { address(): AddressInfo | string | null }): number =>
  (server.address() as AddressInfo).port;

const providers = (url: string): ProviderConfig[] => [
  // Its calls that a test holds, or that wait for a status lookup, time out soon.
  payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS, notFoundGraceMs: 300 }),
  payProvider(url, 'pay-backup'),
  // Files its charges under ids of its own: its lookup by our key never has a record.
  payProvider(url, 'pay-own-ids', { notFoundGraceMs: 300 }),
  payProvider(url, 'pay-blackholed', {
    url: `https://127.0.0.1:${portOf(silentHost)}/v1/charges`,
    statusUrl: `https://127.0.0.1:${portOf(silentHost)}/v1/charges/by-key/{key}`,
    timeoutMs: 15_000,
  }),
  payProvider(url, 'pay-html-status', {
    statusUrl: `http://127.0.0.1:${portOf(htmlStatus)}/charges/{key}`,
    notFoundGraceMs: 0,
  }),
  chatProvider(url, 'chat', 'sim-steady', { timeoutMs: TIMES_OUT_SOON_MS }),
  chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 10_000 }),
  chatProvider(url, 'chat-window', 'sim-steady', { lateResultTimeoutMs: 3_000 }),
  anthropicProvider(url, 'claude', 'sim-steady', { lateResultTimeoutMs: 3_000 }),
];

let stack: TestStack;
beforeAll(async () => {
  silentHost = createTcpServer((socket) => socket.on('data', (chunk) => silentBytes.push(chunk)));
  htmlStatus = createHttpServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<html><body>404 Not Found</body></html>');
  });
  await Promise.all([
    new Promise<void>((resolve) => silentHost.listen(0, '127.0.0.1', resolve)),
    new Promise<void>((resolve) => htmlStatus.listen(0, '127.0.0.1', resolve)),
  ]);
  stack = await startTestStack({ providers });
  await certifyForSetup(stack, [
    ['pay-backup', 'charge'],
    ['chat-backup', 'summarize'],
  ]);
});
afterEach(() => stack.simulator.clearFaults());
afterAll(async () => {
  await stack?.stop();
  silentHost?.close();
  htmlStatus?.close();
});

const summarizeBody = (providers: string[]) => ({
  type: 'summarize',
  input: { text: 'The first sentence is the summary. The second one is not needed.' },
  providers,
});

describe('a success answer from a provider with side effects is never a definite failure', () => {
  test('a charge answered 200 with a field the contract does not know is unknown, so the fallback never charges; the status lookup settles it', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'answer_with', merge: { fee: 35 } } });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');

    expect(done.completedBy).toBe(`${job.id}:1`);
    expect(done.result).not.toHaveProperty('fee');
    const [first] = done.attempts;
    // The answer that broke the contract stays on the attempt, with the reason.
    expect(first?.error).toMatchObject({ code: 'contract_violation_after_effect' });
    expect(first?.rawOutput).toMatchObject({ fee: 35 });
    expect(done.attempts).toHaveLength(1);
    expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:1`]);
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
  });

  test('a charge whose answer and every status lookup echo the currency as "eur" blocks the job, says an operator is needed, and only the operator settles it', async () => {
    stack.simulator.inject({
      route: 'charge',
      fault: { kind: 'answer_with', merge: { currency: 'eur' } },
    });
    stack.simulator.inject({
      route: 'charge-status',
      times: 10_000,
      fault: { kind: 'answer_with', merge: { currency: 'eur' } },
    });
    const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    const waiting = await eventually(
      () => workflowStatus(stack, job.workflowId),
      (status) => status.needsOperator,
    );
    expect(waiting.status).toBe('unknown');
    expect(waiting.waitingOn).toMatch(/currency eur is not EUR; an operator must settle it/);
    // Blocked: nothing was sent to the fallback.
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);

    const charged = (await (
      await fetch(`${stack.simulator.url}/v1/charges/by-key/${encodeURIComponent(`${job.id}:1`)}`)
    ).json()) as Record<string, unknown>;
    const resolved = await operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, {
      outcome: 'succeeded',
      reason: 'the bank statement shows EUR',
      result: { ...charged, currency: 'EUR' },
    });
    expect(resolved.status).toBe(200);
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.completedBy).toBe(`${job.id}:1`);
    expect(effectsFor(stack, job.id)).toHaveLength(1);
  });

  test.each(['not_json', 'cut_off'] as const)(
    'a charge answered 2xx with a body that cannot be read (%s), by a provider whose lookup has no record under our key, is evidence of work: "no record" never fails it, so the fallback never charges',
    async (body) => {
      stack.simulator.inject({
        route: 'charge',
        fault: { kind: 'unreadable_success', body, filesUnderOwnId: true },
      });
      const job = await createJob(stack, chargeBody(['pay-own-ids', 'pay-backup']));
      const attemptId = `${job.id}:1`;
      // "No record", said twice the grace apart after the call ended: an operator must look.
      const seen = await eventually(
        async () => ({
          job: await readJob(stack, job.id),
          workflow: await workflowStatus(stack, job.workflowId),
        }),
        (now) =>
          now.workflow.needsOperator ||
          ['succeeded', 'failed', 'cancelled'].includes(now.job.status),
      );
      expect(seen.job.status).toBe('unknown');
      expect(seen.job.attempts.map((a) => [a.provider, a.state])).toEqual([
        ['pay-own-ids', 'unknown'],
      ]);
      const { rows } = await stack.pool.query<{ answered: boolean }>(
        'SELECT success_answered_at IS NOT NULL AS answered FROM attempts WHERE id = $1',
        [attemptId],
      );
      expect(rows[0]?.answered).toBe(true);
      expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([attemptId]);
      expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([attemptId]);
      await operator(stack, 'POST', `/jobs/${job.id}/cancel`, { reason: 'test over' });
    },
  );

  test('a job without side effects whose answer breaks the contract fails that attempt at once and fails over', async () => {
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'answer_with', merge: { confidence: 0.97 } },
    });
    const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['chat', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({ code: 'contract_violation' });
  });
});

test('a status lookup that has no record yet is not believed while the original call can still land: one charge in total', async () => {
  // The provider registers the key only after our first status lookup, then charges.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'register_after_status_lookup' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');

  // The lookup did answer 404 before the charge was made…
  const lookups = stack.simulator
    .requests()
    .filter((r) => r.route === 'charge-status' && r.idempotencyKey === `${job.id}:1`);
  expect(lookups.length).toBeGreaterThanOrEqual(1);
  // …and still the original attempt is the one that counts, and nobody charged twice.
  expect(done.completedBy).toBe(`${job.id}:1`);
  expect(done.attempts.map((a) => a.state)).toEqual(['succeeded']);
  expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
  expect(effectsFor(stack, job.id)).toHaveLength(1);
});

describe('an unknown attempt without side effects settles when its call ends', () => {
  test('a summarize job whose provider answers 503 fails over instead of waiting for an operator', async () => {
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'fail_before', status: 503 },
    });
    const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['chat', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({ code: 'http_503', certainty: 'ambiguous' });
  });

  test('Anthropic’s 529 overloaded fails the attempt over too', async () => {
    stack.simulator.inject({ route: 'messages', fault: { kind: 'fail_before', status: 529 } });
    const job = await createJob(stack, summarizeBody(['claude', 'chat-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['claude', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({ code: 'http_529' });
  });

  test('a call that timed out stays unknown until its late error arrives, then the job fails over', async () => {
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'hold', gate: 'late-error', then: { kind: 'fail_before', status: 500 } },
    });
    const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
    // While the call runs on past its timeout, the job waits: its late answer could still win.
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    expect(requestsFor(stack, job.id, 'chat').map((r) => r.idempotencyKey)).toEqual([
      `${job.id}:1`,
    ]);
    stack.simulator.openGate('late-error');
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['chat', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({
      code: 'http_500',
      earlier: { code: 'timeout' },
    });
  });
});

describe('every provider call has an end', () => {
  test.each([
    ['OpenAI-compatible', 'chat' as const, 'chat-window'],
    ['Anthropic', 'messages' as const, 'claude'],
  ])(
    'a %s provider that sends headers and then stalls the body is cut off at its late-result window, and the job fails over',
    async (_kind, route, provider) => {
      stack.simulator.inject({ route, fault: { kind: 'stall_after_headers' } });
      const job = await createJob(stack, summarizeBody([provider, 'chat-backup']));
      const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
      expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
        [provider, 'failed'],
        ['chat-backup', 'succeeded'],
      ]);
      expect(done.attempts[0]?.error).toMatchObject({ code: 'late_window_exceeded' });
    },
  );
});

describe('what counts as "nothing was sent"', () => {
  test('a blackholed provider host (the connection is never established) is a definite failure, so the charge fails over', async () => {
    const job = await createJob(stack, chargeBody(['pay-blackholed', 'pay-backup']));
    const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded', 45_000);
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['pay-blackholed', 'failed'],
      ['pay-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({ code: 'unreachable', certainty: 'definite' });
    // The silent host saw a TLS handshake begin, never an HTTP request.
    expect(Buffer.concat(silentBytes).toString('latin1')).not.toMatch(/POST|Idempotency-Key/i);
    expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:2`]);
  }, 60_000);

  test('a status URL answering 404 without the documented JSON body does not prove "never processed": the job stays blocked', async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_before' } });
    const job = await createJob(stack, chargeBody(['pay-html-status', 'pay-backup']));
    await untilJob(stack, job.id, (j) => j.status === 'unknown');
    const waiting = await eventually(
      () => workflowStatus(stack, job.workflowId),
      (status) => /without a JSON body/.test(status.waitingOn),
    );
    expect(waiting.status).toBe('unknown');
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
  });
});
