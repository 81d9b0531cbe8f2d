import { temporal } from '@temporalio/proto';
import { finishJobWithoutResult } from '../../src/db/endedJobs';
import type { ProviderConfig } from '../../src/providers/provider';
import { holdRowsInTrigger } from '../support/barriers';
import { callSnapshot, inFlight, untilRequestReceived } from '../support/callInFlight';
import { chargeBody, createJob, freshKey, operator, untilJob } from '../support/jobs';
import { eventually } from '../support/polling';
import { providerSaw, requestsFor } from '../support/providerLedger';
import { chatProvider, payProvider } from '../support/providers';
import { attemptRows } from '../support/rows';
import { certifyForSetup, startTestStack, type TestStack } from '../support/stack';
import { untilWorkflowClosed } from '../support/temporal';

/**
 * A worker killed in the middle of a charge. Wherever the kill lands, the job ends with one
 * winner and one charge; when it lands after the request left, the charge in flight is the one
 * recorded (the status lookup finds it).
 */
const providers = (url: string): ProviderConfig[] => [
  // A short late-result window, so a request that never left is known to be gone soon.
  payProvider(url, 'pay', { timeoutMs: 3_000, lateResultTimeoutMs: 4_000, notFoundGraceMs: 500 }),
  payProvider(url, 'pay-backup', { timeoutMs: 3_000 }),
  // A call that may run on for two minutes after its attempt timed out.
  chatProvider(url, 'chat-patient', 'sim-steady', { lateResultTimeoutMs: 120_000 }),
];

/** How long a stopping worker lets running calls go on before it gives up on them. */
const FORCED_SHUTDOWN_MS = 1_000;

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    providers,
    workerProcess: true,
    env: {
      ONEJOB_SHUTDOWN_FORCE_TIME_MS: String(FORCED_SHUTDOWN_MS),
      // A killed worker's runs wait this long on its sticky queue before the next worker may
      // take their tasks (the SDK's default is 10 s): what a test of kills waits out each time.
      ONEJOB_STICKY_QUEUE_TIMEOUT_MS: '2000',
    },
  });
  await certifyForSetup(stack, [['pay-backup', 'charge']]);
});
afterAll(async () => {
  await stack?.stop();
});

/** A summary job whose one provider call has received headers and then nothing, in flight. */
async function stalledChatCall(text: string) {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'stall_after_headers' } });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text },
    providers: ['chat-patient'],
  });
  await eventually(
    async () => requestsFor(stack, job.id, 'chat'),
    (requests) => requests.length === 1,
  );
  return job;
}

test('a worker asked to stop while a provider call stalls gives the call its forced shutdown time (1 s), then exits by itself, while the call still stalls', async () => {
  const job = await stalledChatCall(
    'The provider sends headers, then nothing. The worker must still stop.',
  );
  // The call could hold the worker for two minutes (its late-result window); the worker waits
  // its forced shutdown time, then closes its connections and exits (1.08 s measured here). The
  // lower bound is exact. What shows that the call did not hold it is state: the worker exited
  // on the SIGTERM alone, and the call is still in flight, unanswered, afterwards. The one upper
  // bound is the stalled call's own: a worker that waited for the call would outlast it.
  const lateResultWindowMs = 120_000;
  const asked = performance.now();
  const stoppedMs = await Promise.race([
    stack.killWorker('SIGTERM').then(() => performance.now() - asked),
    new Promise<number>((resolve) =>
      setTimeout(() => resolve(Infinity), lateResultWindowMs / 2).unref(),
    ),
  ]);
  expect(stoppedMs).toBeGreaterThanOrEqual(FORCED_SHUTDOWN_MS);
  expect(stoppedMs).toBeLessThan(lateResultWindowMs / 2);
  // The call never ended: the provider is still stalling it.
  expect((await attemptRows(stack.pool, job.id))[0]).toMatchObject({ state: 'running' });
  await stack.restartWorker();
}, 90_000);

async function killAndRestart(): Promise<void> {
  await stack.killWorker('SIGKILL');
  await stack.restartWorker();
}

test('SIGKILL of the worker while an attempt runs, then a restart: one winner and exactly one charge, wherever the kill landed', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'delay', ms: 2_000 } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  // The attempt is running: its request may or may not have left yet.
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running',
    20_000,
  );
  await killAndRestart();

  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded', 60_000);
  const winners = done.attempts.filter((a) => a.state === 'succeeded');
  expect(winners.map((a) => a.id)).toEqual([done.completedBy]);
  // One charge in the provider's ledger, and it is the winner's; no attempt id was sent twice.
  const saw = providerSaw(stack, job.id);
  expect(saw.effects).toEqual([done.completedBy]);
  expect(new Set(saw.requests).size).toBe(saw.requests.length);
}, 90_000);

test('when the kill lands after the request left, the charge in flight is the one recorded and nothing else is sent', async () => {
  // The provider works on the charge and answers only when the gate opens: after the kill.
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: 'after-the-kill' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  const attemptId = `${job.id}:1`;
  // In flight: the attempt is running, the provider has the request and has not answered.
  expect(await untilRequestReceived(stack, attemptId)).toEqual(inFlight(attemptId));
  await stack.killWorker('SIGKILL');
  // The kill landed while the call was in flight: nothing moved.
  expect(await callSnapshot(stack, attemptId)).toEqual(inFlight(attemptId));

  // The provider does the work and answers a worker that is gone; a new worker takes over.
  stack.simulator.openGate('after-the-kill');
  await eventually(
    async () => providerSaw(stack, job.id).effects,
    (effects) => effects.length === 1,
  );
  await stack.restartWorker();

  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded', 60_000);
  expect(done.completedBy).toBe(attemptId);
  expect(done.attempts.map((a) => a.state)).toEqual(['succeeded']);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [attemptId],
    effects: [attemptId],
  });
}, 90_000);

/**
 * A barrier in the database exactly between "the attempt row exists" and "the request leaves":
 * the worker's `starting → running` update waits in a trigger.
 */
const barrierBeforeTheCallLeaves = () =>
  holdRowsInTrigger(
    stack,
    'test_hold_call_start',
    'UPDATE ON attempts',
    "OLD.state = 'starting' AND NEW.state = 'running'",
  );

/**
 * A charge over `plan` whose worker is killed while attempt 1's begin waits at the barrier (it
 * sent nothing), and a new worker started.
 */
async function killedBeforeTheCallLeaves(plan: string[]): Promise<{ id: string }> {
  const barrier = await barrierBeforeTheCallLeaves();
  let job: { id: string };
  try {
    job = await createJob(stack, chargeBody(plan));
    await barrier.blocked();
    expect((await attemptRows(stack.pool, job.id)).map((a) => a.state)).toEqual(['starting']);
    await stack.killWorker('SIGKILL');
  } finally {
    // The dead worker's statement stays stopped (its client is gone): end it, then lift.
    await barrier.terminateWaiters();
    await barrier.remove();
  }
  await stack.restartWorker();
  return job;
}

test('when the kill lands before the request left, attempt 1 sent nothing, and its provider is tried again (its retries off, a fallback in the plan): charged exactly once', async () => {
  const job = await killedBeforeTheCallLeaves(['pay', 'pay-backup']);

  const done = await untilJob(
    stack,
    job.id,
    (j) => j.status !== 'running' && j.status !== 'pending',
    60_000,
  );
  expect(done).toMatchObject({ status: 'succeeded', completedBy: `${job.id}:2` });
  // It never reached its provider, so the provider was not tried: the plan stays on it.
  expect(done.attempts.map((a) => [a.provider, a.state, a.error?.code ?? null])).toEqual([
    ['pay', 'failed', 'never_sent'],
    ['pay', 'succeeded', null],
  ]);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:2`],
    effects: [`${job.id}:2`],
  });
}, 90_000);

/**
 * A charge job whose worker is killed while its admission writes attempt 1: held at the
 * INSERT itself (`statement`, before the COMMIT was sent) or in the COMMIT (`commit`).
 */
async function killedInAdmission(prefix: string, at: 'statement' | 'commit') {
  const barrier = await holdRowsInTrigger(
    stack,
    'test_attempt_insert_barrier',
    'INSERT ON attempts',
    'true',
    at,
  );
  let created: ReturnType<typeof createJob> | undefined;
  try {
    created = createJob(stack, chargeBody(['pay']), freshKey(prefix));
    created.catch(() => undefined);
    await barrier.blocked();
    await stack.killWorker('SIGKILL');
  } finally {
    await barrier.remove();
  }
  return created;
}

/**
 * A charge job whose admission wrote attempt 1 while its worker was killed, before its workflow
 * task completed: attempt 1 is `starting`, nothing was sent, and no worker runs until the test
 * restarts one. The barrier: admission's transaction waits in its COMMIT, so the kill lands
 * after admission sent it; the transaction commits once the barrier is removed.
 */
async function admissionKilledAfterWritingAttemptOne(prefix: string) {
  const job = await killedInAdmission(prefix, 'commit');
  // The dead worker's INSERT commits: attempt 1 is written, and nothing was sent.
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows.length === 1,
  );
  expect((await attemptRows(stack.pool, job.id)).map((a) => [a.seq, a.state])).toEqual([
    [1, 'starting'],
  ]);
  return job;
}

test('admission that runs again, its worker killed right after it wrote attempt 1, reuses that attempt: a single-provider job is charged once and succeeds', async () => {
  const job = await admissionKilledAfterWritingAttemptOne('admit-twice');
  await stack.restartWorker();
  const done = await untilJob(
    stack,
    job.id,
    (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status),
    60_000,
  );
  expect(done.status).toBe('succeeded');
  expect(done.completedBy).toBe(`${job.id}:1`);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`],
    effects: [`${job.id}:1`],
  });
}, 90_000);

test('admission that runs again after an operator cancelled the job meanwhile leaves nothing starting: attempt 1 is cancelled, nothing is sent, and the key can be released', async () => {
  const job = await admissionKilledAfterWritingAttemptOne('admit-after-cancel');
  // The operator's cancel while the workflow is still admitting ends the row itself (as
  // cancelJob does when the workflow cannot take the update yet).
  await finishJobWithoutResult(stack.pool, job.id, 'cancelled', {
    code: 'cancelled',
    operator: 'test',
    reason: 'the customer withdrew the order',
    workflow: 'admitting',
  });
  await stack.restartWorker();
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
  // Nothing will ever send or settle a `starting` attempt of an ended job: admission settles it.
  expect((await attemptRows(stack.pool, job.id)).map((a) => [a.seq, a.state])).toEqual([
    [1, 'cancelled'],
  ]);
  expect(providerSaw(stack, job.id)).toEqual({ requests: [], effects: [] });
  const released = await operator(stack, 'POST', `/jobs/${job.id}/release-key`, {
    reason: 'run it again',
  });
  expect(released.status).toBe(200);
}, 90_000);

test('a worker killed inside admission, before its transaction committed, leaves neither the admission nor attempt 1; the next worker admits the job and charges once', async () => {
  // Held at attempt 1's INSERT: admission's transaction has begun, and the kill lands before
  // its COMMIT.
  const job = await killedInAdmission('admit-killed-mid-way', 'statement');
  // The dead worker can never send its COMMIT: whatever it wrote stays invisible, then goes.
  expect(await attemptRows(stack.pool, job.id)).toEqual([]);
  const { rows } = await stack.pool.query('SELECT admitted_at FROM jobs WHERE id = $1', [job.id]);
  expect(rows).toEqual([{ admitted_at: null }]);

  await stack.restartWorker();
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded', 60_000);
  expect(done.completedBy).toBe(`${job.id}:1`);
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`],
    effects: [`${job.id}:1`],
  });
}, 90_000);

/**
 * Plays a worker whose workflow tasks fail: polls this stack's task queue and fails each task it
 * gets, until `count` of them were the given workflow's (another job's task it fails too: its
 * workflow retries it once a worker is back).
 */
async function failWorkflowTasksOf(workflowId: string, count: number): Promise<void> {
  const { workflowService, options, connection } = stack.temporal;
  const identity = 'a test playing a worker whose workflow tasks fail';
  for (let failed = 0; failed < count;) {
    // A long poll: the server answers within a minute, with a task or empty.
    const task = await connection.withDeadline(Date.now() + 90_000, () =>
      workflowService.pollWorkflowTaskQueue({
        namespace: options.namespace,
        taskQueue: {
          name: stack.taskQueue,
          kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
        },
        identity,
      }),
    );
    if (!task.taskToken?.length) continue;
    await workflowService.respondWorkflowTaskFailed({
      namespace: options.namespace,
      taskToken: task.taskToken,
      identity,
      cause:
        temporal.api.enums.v1.WorkflowTaskFailedCause
          .WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
      failure: { message: 'failed on purpose by a test' },
    });
    if (task.workflowExecution?.workflowId === workflowId) failed += 1;
  }
}

test("while a job's workflow task keeps failing, an operator's cancel is answered 503 with Retry-After and changes nothing; once a worker completes the task, the same cancel is let in", async () => {
  const job = await stalledChatCall('Its worker is lost, and its workflow task fails twice.');
  await stack.killWorker('SIGKILL');
  try {
    // A signal gives the workflow a task; it fails twice, and Temporal turns updates away.
    await stack.temporal.workflow.getHandle(job.workflowId).signal('testWakeUp');
    await failWorkflowTasksOf(job.workflowId, 2);

    const refused = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
      reason: 'the customer withdrew the order',
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await refused.json()) as { type: string }).type).toMatch(/service-unavailable$/);
    // Nothing happened: the job is open and its workflow never saw the cancel.
    const row = await stack.pool.query<{ terminal_status: string | null }>(
      'SELECT terminal_status FROM jobs WHERE id = $1',
      [job.id],
    );
    expect(row.rows[0]?.terminal_status).toBeNull();
  } finally {
    await stack.restartWorker();
  }

  // The worker completes the retried task; the same cancel now reaches the workflow.
  const again = await operator(stack, 'POST', `/jobs/${job.id}/cancel`, {
    reason: 'the customer withdrew the order',
  });
  expect(again.status).toBe(200);
  const ended = await untilJob(stack, job.id, (j) => j.status === 'cancelled', 30_000);
  expect(ended.status).toBe('cancelled');
}, 120_000);
