import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ProviderConfig } from '../src/providers/provider';
import { chargeBody, createJob, operator, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { effectsFor, requestsFor } from './support/providerLedger';
import { chatProvider, payProvider } from './support/providers';
import { certifyForSetup, startTestStack, type TestStack } from './support/stack';
import { workflowStatus } from './support/temporal';

/**
 * The README's classification table, end to end: each row's error, provoked at the simulator,
 * makes the attempt `failed` (the plan moves on) or `unknown` (the job blocks) through the real
 * worker and workflow, not only in the adapters (test/classification.test.ts). Rows pinned
 * elsewhere are not repeated: a blackholed host, a 503 and Anthropic's 529 on a job without
 * side effects, a dropped connection (sideEffectCertainty, attempts, attemptRules).
 */

/** A port on which nothing listens: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let stack: TestStack;
beforeAll(async () => {
  const refused = await closedPort();
  stack = await startTestStack({
    providers: (url): ProviderConfig[] => [
      // No status lookup: nothing but an operator (or a callback) can settle its unknown attempts.
      payProvider(url, 'pay-blind', { statusUrl: undefined }),
      payProvider(url, 'pay-refused', {
        url: `http://127.0.0.1:${refused}/v1/charges`,
        statusUrl: `http://127.0.0.1:${refused}/v1/charges/by-key/{key}`,
      }),
      payProvider(url, 'pay-backup'),
      chatProvider(url, 'chat', 'sim-steady'),
      chatProvider(url, 'chat-refused', 'sim-steady', {
        baseUrl: `http://127.0.0.1:${refused}/v1`,
      }),
      chatProvider(url, 'chat-backup', 'sim-backup'),
    ],
  });
  await certifyForSetup(stack, [
    ['pay-backup', 'charge'],
    ['chat-backup', 'summarize'],
  ]);
});
afterEach(() => stack.simulator.clearFaults());
afterAll(async () => {
  await stack?.stop();
});

/** Done running for now: settled, or blocked on an unknown attempt. */
const stopped = (job: { status: string }): boolean =>
  job.status !== 'pending' && job.status !== 'running';

const summarizeBody = (providers: string[]) => ({
  type: 'summarize',
  input: { text: 'The first sentence is the summary. The second one is not needed.' },
  providers,
});

describe('an unreachable provider (connection refused) is a definite failure: the attempt fails and the plan moves on', () => {
  test.each([
    ['a charge (side effects)', 'pay-refused', 'pay-backup', 'charge'],
    ['a summary (no side effects)', 'chat-refused', 'chat-backup', 'chat'],
  ] as const)('%s', async (_what, primary, fallback, route) => {
    const body =
      route === 'charge' ? chargeBody([primary, fallback]) : summarizeBody([primary, fallback]);
    const job = await createJob(stack, body);
    const done = await untilJob(stack, job.id, stopped);
    expect(done.status).toBe('succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      [primary, 'failed'],
      [fallback, 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({ code: 'unreachable', certainty: 'definite' });
    expect(done.completedBy).toBe(`${job.id}:2`);
    // Nothing reached a provider for the first attempt.
    expect(requestsFor(stack, job.id, route).map((r) => r.idempotencyKey)).toEqual([`${job.id}:2`]);
  });
});

describe.each([
  [408, 'fail_before'],
  [409, 'fail_before'],
  [500, 'fail_after'],
  [502, 'fail_before'],
] as const)('a provider answering HTTP %i (%s)', (status, kind) => {
  test(`with side effects: the attempt is unknown and blocks the job; no fallback is sent`, async () => {
    stack.simulator.inject({ route: 'charge', fault: { kind, status } });
    const job = await createJob(stack, chargeBody(['pay-blind', 'pay-backup']));
    expect((await untilJob(stack, job.id, stopped)).status).toBe('unknown');
    // The workflow has looked at the attempt and decided to wait: only an operator can settle it.
    const waiting = await eventually(
      () => workflowStatus(stack, job.workflowId),
      (s) => s.needsOperator,
    );
    expect(waiting.status).toBe('unknown');
    expect(waiting.waitingOn).toMatch(
      /^blocked: attempt 1 on pay-blind is unknown.*no status lookup/,
    );

    const blocked = await untilJob(stack, job.id, () => true);
    expect(blocked.status).toBe('unknown');
    expect(blocked.attempts.map((a) => [a.provider, a.state])).toEqual([['pay-blind', 'unknown']]);
    expect(blocked.attempts[0]?.error).toMatchObject({
      code: `http_${status}`,
      certainty: 'ambiguous',
    });
    expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);
    expect(effectsFor(stack, job.id)).toHaveLength(kind === 'fail_after' ? 1 : 0);

    // The test is over: an operator ends the job, so its workflow stops waiting.
    const cancelled = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
      reason: 'test over',
    });
    expect(cancelled.status).toBe(200);
  });

  test(`without side effects: the call has ended, so the attempt fails and the plan moves on`, async () => {
    stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind, status } });
    const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
    const done = await untilJob(stack, job.id, stopped);
    expect(done.status).toBe('succeeded');
    expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
      ['chat', 'failed'],
      ['chat-backup', 'succeeded'],
    ]);
    expect(done.attempts[0]?.error).toMatchObject({
      code: `http_${status}`,
      certainty: 'ambiguous',
      settledBecause: 'no side effects, and the call has ended',
    });
    expect(done.completedBy).toBe(`${job.id}:2`);
  });
});
