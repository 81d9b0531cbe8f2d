import { chargeBody, createJob, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { startPrivateTemporal, type PrivateTemporal } from '../support/privateTemporal';
import { payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * A provider call that outlives its attempt timeout keeps listening for the late answer (up to
 * the provider's late-result window, a day here), but Temporal has already timed its activity
 * out: a heartbeat then only costs the server a lookup that finds nothing. A thousand blocked
 * jobs heartbeating once a second swamped the dev server (issue 17's blocked row). The server
 * is the test's own, so every heartbeat it counts is this job's.
 */
let temporal: PrivateTemporal;
let stack: TestStack;
beforeAll(async () => {
  temporal = await startPrivateTemporal('heartbeats');
  stack = await startTestStack({
    temporalAddress: temporal.address,
    providers: (url) => [
      payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS, lateResultTimeoutMs: 86_400_000 }),
    ],
    env: { ONEJOB_RECONCILE_FIRST_DELAY_MS: '1000', ONEJOB_RECONCILE_MAX_DELAY_MS: '1000' },
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await temporal?.stop();
});

/** Heartbeats the server has been sent so far, over all its services. */
async function heartbeatsSeen(): Promise<number> {
  const text = await (await fetch(temporal.metricsUrl)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (
      line.startsWith('service_requests{') &&
      line.includes('operation="RecordActivityTaskHeartbeat"')
    )
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Looks taken at the unknown attempt so far (the workflow's, then the reconciler's): its status lookups. */
async function rechecks(attemptId: string): Promise<number> {
  return stack.simulator
    .requests()
    .filter((r) => r.route === 'charge-status' && r.idempotencyKey === attemptId).length;
}

test('a provider call abandoned at its attempt timeout stops heartbeating, while it still waits for the late answer', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'late' } });
  const job = await createJob(stack, chargeBody(['pay']));
  await untilJob(stack, job.id, (seen) => seen.status === 'unknown');
  // From the first look on, the attempt's activity is long timed out (a heartbeat the SDK held
  // back at that moment has gone out by then); three more looks are three seconds or more.
  await eventually(
    () => rechecks(`${job.id}:1`),
    (n) => n >= 1,
  );
  const before = await heartbeatsSeen();
  await eventually(
    () => rechecks(`${job.id}:1`),
    (n) => n >= 4,
  );
  expect((await heartbeatsSeen()) - before).toBe(0);

  // The call was still listening: the late answer settles the job.
  stack.simulator.openGate('late');
  const settled = await untilJob(stack, job.id, (seen) => seen.status !== 'unknown');
  expect(settled.status).toBe('succeeded');
});
