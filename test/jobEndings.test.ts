import type { ProviderConfig } from '../src/providers/provider';
import { callSnapshot, untilRequestReceived } from './support/callInFlight';
import { chargeBody, createJob, freshKey, operator, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { providerSaw } from './support/providerLedger';
import { payProvider } from './support/providers';
import { useTestStack } from './support/stack';
import { untilWorkflowClosed } from './support/temporal';
import { WebhookReceiver } from './support/webhookReceiver';

/**
 * Every path that ends a job settles what it left in flight (`starting` → `cancelled`, `running`
 * → `unknown`, looked at like any unknown) and hands the ending to its owner's webhooks at once,
 * whoever ends it: the job's workflow, the API with no workflow left, a late answer after the
 * run was terminated. What lands after a job ended without a result is told to its owner too.
 */
const providers = (url: string): ProviderConfig[] => [
  // A call held by the provider stays far from Temporal's timeouts and its own window.
  payProvider(url, 'pay', { timeoutMs: 30_000, lateResultTimeoutMs: 120_000 }),
  // A call that times out at once and may land for two minutes; no status lookup to settle it.
  payProvider(url, 'pay-slow', {
    statusUrl: undefined,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 120_000,
  }),
];

const stack = useTestStack({
  providers,
  // The backstop that finds deliveries nobody sends is out of reach: what arrives was handed over.
  env: { ONEJOB_WEBHOOK_STRANDED_AFTER_MS: '3600000' },
});

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  const answer = await stack.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  expect(answer.status).toBe(201);
  receiver.secret = ((await answer.json()) as { secret: string }).secret;
});
afterAll(async () => {
  await receiver?.down();
});

const ended = (job: JobView): boolean =>
  job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled';

/** The events the owner's receiver has verified for a job, in arrival order. */
function eventsOf(jobId: string): string[] {
  return receiver.of(jobId).map((r) => ('type' in r.verified ? r.verified.type : 'unverified'));
}

function untilEvent(jobId: string, type: string): Promise<string[]> {
  return eventually(
    async () => eventsOf(jobId),
    (types) => types.includes(type),
  );
}

async function attemptState(attemptId: string): Promise<string> {
  const { rows } = await stack.pool.query<{ state: string }>(
    'SELECT state FROM attempts WHERE id = $1',
    [attemptId],
  );
  return rows[0]!.state;
}

/** A charge on `provider` whose request has reached it; it holds it until its gate opens. */
async function chargeHeldAtProvider(gate: string, provider: string) {
  const body = chargeBody([provider]);
  stack.simulator.inject({
    route: 'charge',
    account: body.input.account,
    fault: { kind: 'hold', gate },
  });
  const created = await createJob(stack, body);
  const attemptId = `${created.id}:1`;
  await untilRequestReceived(stack, attemptId);
  return { created, attemptId };
}

/** A charge the provider holds until its gate opens, its run terminated meanwhile. */
async function chargeInFlightWithoutWorkflow(gate: string) {
  const { created, attemptId } = await chargeHeldAtProvider(gate, 'pay');
  await stack.temporal.workflow
    .getHandle(created.workflowId)
    .terminate('an operator terminates the run mid-call');
  expect(await untilWorkflowClosed(stack, created.workflowId)).toBe('TERMINATED');
  return { created, attemptId };
}

test("an owner's cancel of a job whose workflow has closed settles its running charge as unknown at once; the charge that lands later is kept as a loss, and the owner hears of the cancel and of the late charge without waiting for a backstop", async () => {
  const gate = freshKey('cancel-closed-run');
  const { created, attemptId } = await chargeInFlightWithoutWorkflow(gate);
  const cancel = await stack.request('POST', `/v1/jobs/${created.id}/cancel`, {
    body: { reason: 'the customer changed their mind' },
  });
  expect(cancel.status).toBe(200);
  // Settled with the ending: the charge may still land, so its attempt is unknown, not running.
  expect(await callSnapshot(stack, attemptId)).toEqual({
    attempt: { state: 'unknown', callEnded: false },
    requests: [attemptId],
    effects: [],
  });
  expect(await untilEvent(created.id, 'job.cancelled')).toEqual(['job.cancelled']);

  // The provider charges after all: the answer loses to the cancel, and the owner is told.
  stack.simulator.openGate(gate);
  await eventually(
    () => attemptState(attemptId),
    (state) => state === 'lost',
  );
  expect(await untilEvent(created.id, 'job.late_result')).toEqual([
    'job.cancelled',
    'job.late_result',
  ]);
  expect(providerSaw(stack, created.id)).toEqual({ requests: [attemptId], effects: [attemptId] });
});

test('a try-again on an open job whose run was terminated is a 503 with Retry-After that changes nothing, never a 409 saying the job has ended', async () => {
  const gate = freshKey('try-again-closed-run');
  const { created, attemptId } = await chargeInFlightWithoutWorkflow(gate);
  try {
    const answer = await stack.request('POST', `/v1/jobs/${created.id}/attempts`, { body: {} });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(await answer.json()).toMatchObject({ type: '/problems/service-unavailable' });
    expect(await callSnapshot(stack, attemptId)).toEqual({
      attempt: { state: 'running', callEnded: false },
      requests: [attemptId],
      effects: [],
    });
  } finally {
    stack.simulator.openGate(gate);
  }
  await untilJob(stack, created.id, ended);
});

test('a late answer that ends a job whose workflow was terminated reaches the owner’s webhooks within seconds, not at the stranded-delivery backstop', async () => {
  const gate = freshKey('late-answer-closed-run');
  const { created, attemptId } = await chargeInFlightWithoutWorkflow(gate);
  stack.simulator.openGate(gate);
  const done = await untilJob(stack, created.id, ended);
  expect(done).toMatchObject({ status: 'succeeded', completedBy: attemptId });
  expect(await untilEvent(created.id, 'job.succeeded')).toEqual(['job.succeeded']);
});

test("an operator's failed, given while the attempt's call may still land, is held until it cannot: the charge that lands meanwhile is the job's result", async () => {
  const gate = freshKey('operator-failed-held');
  const { created, attemptId } = await chargeHeldAtProvider(gate, 'pay-slow');
  // The attempt timed out: unknown, its call still out (the provider holds it).
  await untilJob(stack, created.id, (job) => job.status === 'unknown');
  const resolve = await operator(
    stack,
    'POST',
    `/attempts/${encodeURIComponent(attemptId)}/resolve`,
    {
      outcome: 'failed',
      reason: 'no charge on the provider dashboard',
    },
  );
  expect(resolve.status).toBe(200);
  expect(await resolve.json()).toMatchObject({ attemptId, state: 'unknown', held: true });
  expect(await callSnapshot(stack, attemptId)).toEqual({
    attempt: { state: 'unknown', callEnded: false },
    requests: [attemptId],
    effects: [],
  });

  stack.simulator.openGate(gate);
  const done = await untilJob(stack, created.id, ended);
  expect(done).toMatchObject({ status: 'succeeded', completedBy: attemptId });
  expect(providerSaw(stack, created.id)).toEqual({ requests: [attemptId], effects: [attemptId] });
});
