import type { ProviderConfig } from '../src/providers/provider';
import { OTHER_TOKEN, TEST_OWNER } from './support/identities';
import {
  chargeBody,
  createJob,
  readJob,
  summarizeBody,
  untilJob,
  type JobView,
} from './support/jobs';
import { providerSaw } from './support/providerLedger';
import { chatProvider, payProvider } from './support/providers';
import { startTestStack, type TestStack } from './support/stack';

/**
 * An owner cancels its own job (POST /v1/jobs/:id/cancel) by the operator's rules: a running
 * charge is abandoned and still reconciled, a recorded winner stands, another owner's job is
 * not found.
 */
const providers = (url: string): ProviderConfig[] => [
  // Its calls outlast any test step: only the test decides when they end.
  payProvider(url, 'pay-patient', { timeoutMs: 120_000 }),
  chatProvider(url, 'chat', 'sim-steady'),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ providers });
});
afterAll(async () => {
  await stack?.stop();
});

const cancel = (id: string, body?: unknown, token?: string) =>
  stack.request('POST', `/v1/jobs/${id}/cancel`, {
    ...(body === undefined ? {} : { body }),
    ...(token === undefined ? {} : { token }),
  });

/** A charge whose call the simulator holds until the test opens `gate`; running when returned. */
async function heldCharge(gate: string): Promise<JobView> {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate } });
  const job = await createJob(stack, chargeBody(['pay-patient']));
  await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'running');
  return job;
}

test('an owner cancels its own running charge: the answer is the cancelled job naming the owner, and the charge that lands afterwards is reconciled as lost, never recorded', async () => {
  const job = await heldCharge('owner-cancel');

  const answer = await cancel(job.id, { reason: 'the customer changed their mind' });
  expect(answer.status).toBe(200);
  const cancelled = (await answer.json()) as JobView;
  expect(cancelled).toMatchObject({
    id: job.id,
    status: 'cancelled',
    result: null,
    completedBy: null,
    failure: { code: 'cancelled', owner: TEST_OWNER, reason: 'the customer changed their mind' },
  });
  expect((await cancel(job.id)).status).toBe(409);

  // The call was still out: its success arrives, loses the compare-and-swap, and settles the
  // attempt as lost; the job stays cancelled with no result.
  stack.simulator.openGate('owner-cancel');
  const settled = await untilJob(stack, job.id, (j) => j.attempts[0]?.state === 'lost');
  expect(settled).toMatchObject({ status: 'cancelled', result: null, completedBy: null });
  expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:1`]);
});

test("another owner's cancel is not found and changes nothing; the owner's own, without a body, records the default reason", async () => {
  const job = await heldCharge('other-owner');

  const foreign = await cancel(job.id, { reason: 'not mine' }, OTHER_TOKEN);
  expect(foreign.status).toBe(404);
  expect(foreign.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect((await readJob(stack, job.id)).status).toBe('running');

  const own = await cancel(job.id);
  expect(own.status).toBe(200);
  expect(((await own.json()) as JobView).failure).toEqual({
    code: 'cancelled',
    owner: TEST_OWNER,
    reason: 'cancelled by its owner',
  });
  stack.simulator.openGate('other-owner');
});

test('a job whose result is already recorded is not cancelled: 409 says the status it ended in and the attempt that won', async () => {
  const job = await createJob(stack, summarizeBody(['chat']));
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');

  const answer = await cancel(job.id, { reason: 'too late' });
  expect(answer.status).toBe(409);
  expect(await answer.json()).toMatchObject({
    type: '/problems/job-terminal',
    jobStatus: 'succeeded',
    completedBy: done.completedBy,
  });
  expect(await readJob(stack, job.id)).toEqual(done);
});

test('a cancel with a bad body is a validation problem and cancels nothing', async () => {
  const job = await heldCharge('bad-body');
  for (const body of [{ reason: '' }, { reason: 'ok', extra: true }, { reason: 42 }]) {
    const answer = await cancel(job.id, body);
    expect([answer.status, answer.headers.get('content-type')]).toEqual([
      400,
      expect.stringMatching(/^application\/problem\+json/),
    ]);
  }
  expect((await readJob(stack, job.id)).status).toBe('running');
  expect((await cancel(job.id)).status).toBe(200);
  stack.simulator.openGate('bad-body');
});
