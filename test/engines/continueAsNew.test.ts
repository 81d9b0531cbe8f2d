import type { JobWorkflowResult } from '../../src/workflows/definitions';
import { chargeBody, createJob, operator, readJob, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { effectsFor } from '../support/providerLedger';
import { payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { useTestStack } from '../support/stack';
import { workflowStatus } from '../support/temporal';

/**
 * A job may wait in `unknown` for months. Its workflow continues-as-new long before its history
 * grows large, carrying everything it knows; here the bound is tiny, so one blocked job passes
 * through several runs in seconds.
 */
const stack = useTestStack({
  providers: (url) => [
    payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS }),
    payProvider(url, 'pay-backup'),
  ],
  // A blocked run sleeps between the reconciler's looks; its own looks, every 200 ms here,
  // are what grows its history.
  env: {
    ONEJOB_HISTORY_EVENT_LIMIT: '60',
    ONEJOB_RECONCILE_MAX_DELAY_MS: '200',
    ONEJOB_BLOCKED_SELF_LOOK_MS: '200',
  },
  certify: [['pay-backup', 'charge']],
});

test('a job blocked in unknown continues-as-new through several runs, keeps its search attributes and details, and is settled by an operator through the compare-and-swap', async () => {
  // Charged, but no answer ever comes; the status lookup keeps saying "still processing".
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');

  const handle = stack.temporal.workflow.getHandle(job.workflowId);
  const firstRun = (await handle.describe()).runId;
  const blocked = await eventually(
    () => workflowStatus(stack, job.workflowId),
    (status) => status.run >= 4,
    60_000,
  );
  // The run that answers is a later one, and it knows everything the first one knew.
  expect((await handle.describe()).runId).not.toBe(firstRun);
  expect(blocked).toMatchObject({
    jobId: job.id,
    status: 'unknown',
    attempts: [{ attemptId: `${job.id}:1`, seq: 1, provider: 'pay', state: 'unknown' }],
  });
  expect(blocked.waitingOn).toMatch(/^blocked: attempt 1 on pay is unknown since /);
  const described = await handle.describe();
  expect(described.typedSearchAttributes.getAll()).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        key: expect.objectContaining({ name: 'JobStatus' }),
        value: 'unknown',
      }),
      expect.objectContaining({ key: expect.objectContaining({ name: 'JobOwner' }) }),
      expect.objectContaining({
        key: expect.objectContaining({ name: 'JobType' }),
        value: 'charge',
      }),
      expect.objectContaining({ key: expect.objectContaining({ name: 'AttemptCount' }), value: 1 }),
    ]),
  );
  // Every run stayed small.
  expect(described.historyLength).toBeLessThan(120);

  // The operator finds the charge on the bank's side; it goes through the CAS.
  const resolved = await operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'succeeded',
    reason: 'seen on the dashboard',
    result: {
      id: 'ch_dashboard',
      status: 'succeeded',
      amountCents: 1250,
      currency: 'EUR',
      account: job.input.account,
      idempotencyKey: `${job.id}:1`,
    },
  });
  expect(resolved.status).toBe(200);
  const result = (await handle.result()) as JobWorkflowResult;
  expect(result).toEqual({ jobId: job.id, status: 'succeeded', completedBy: `${job.id}:1` });
  const done = await readJob(stack, job.id);
  expect([done.status, done.completedBy, done.attempts.length]).toEqual([
    'succeeded',
    `${job.id}:1`,
    1,
  ]);
  // The hung charge never completed at the provider, and nothing else was charged.
  expect(effectsFor(stack, job.id)).toEqual([]);
}, 120_000);
