import type { ProviderConfig } from '../src/providers/provider';
import { attemptRows, eventually, startTestStack, type TestStack, payProvider } from './helpers';

/** A worker killed in the middle of a charge: the job still ends with one winner and one charge. */
const providers = (url: string): ProviderConfig[] => [
  payProvider(url, 'pay', { timeoutMs: 3_000 }),
  payProvider(url, 'pay-backup', { timeoutMs: 3_000 }),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ providers, workerProcess: true });
  expect((await stack.certify('pay-backup', 'charge')).passed).toBe(true);
});
afterAll(async () => {
  await stack?.stop();
});

test('SIGKILL of the worker mid-attempt, then a restart: one winner, no duplicate charge', async () => {
  // The provider takes its time; the worker dies while the request is in flight.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'delay', ms: 2_000 } });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'crash-1' },
    body: {
      type: 'charge',
      input: { amountCents: 990, currency: 'EUR', account: 'acct-crash' },
      providers: ['pay', 'pay-backup'],
    },
  });
  const { id } = (await created.json()) as { id: string };
  await eventually(
    () => attemptRows(stack.pool, id),
    (rows) => rows[0]?.state === 'running',
    20_000,
  );
  await stack.killWorker();
  await stack.restartWorker();

  const done = (await (await stack.request('GET', `/v1/jobs/${id}?wait=45`)).json()) as {
    status: string;
    completedBy: string;
  };
  expect(done.status).toBe('succeeded');
  // The charge that was in flight is the one recorded (found by the status lookup); no second attempt charged.
  expect(done.completedBy).toBe(`${id}:1`);
  const charges = stack.simulator
    .ledger()
    .filter((e) => e.route === 'charge' && e.idempotencyKey.startsWith(`${id}:`));
  expect(charges).toEqual([expect.objectContaining({ idempotencyKey: `${id}:1`, executions: 1 })]);
  expect((await attemptRows(stack.pool, id)).map((a) => a.state)).toEqual(['succeeded']);
}, 90_000);
