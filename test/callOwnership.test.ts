import { randomUUID } from 'node:crypto';
import { signCallback } from '../src/api/signatures';
import type { ProviderConfig } from '../src/providers/provider';
import { sweepJobs } from '../src/service/sweeper';
import { startJob } from '../src/temporal/startJob';
import { holdStatement } from './support/barriers';
import { callSnapshot, untilRequestReceived } from './support/callInFlight';
import { CALLBACK_SECRET, TEST_OWNER } from './support/identities';
import { chargeBody, createJob, freshKey, operator, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { providerSaw } from './support/providerLedger';
import { payProvider } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * Temporal runs an activity at least once, and operators terminate and reset runs: one attempt's
 * provider call may be executed twice, at once, or after its run has closed. Only the execution
 * that began the call (moved its attempt from `starting` to `running`) sends it and writes what
 * it came to; any other sends nothing and writes nothing. A call that never began is tried
 * again, and a "failed" that arrives while a call's answer may still be read waits for it.
 */
const providers = (url: string): ProviderConfig[] => [
  // Calls that wait (a held begin, a provider holding its answer) far from Temporal's timeouts.
  payProvider(url, 'pay', { timeoutMs: 30_000, lateResultTimeoutMs: 60_000 }),
  payProvider(url, 'pay-backup', { timeoutMs: 30_000, lateResultTimeoutMs: 60_000 }),
  // A call that goes silent is given up after 1.5 s (its heartbeat timeout); retried at once.
  payProvider(url, 'pay-retried', {
    timeoutMs: 1_500,
    retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 100 },
  }),
  // Signed callbacks, no status lookup, a 2 s window and a grace far longer than any write.
  payProvider(url, 'pay-called-back', {
    statusUrl: undefined,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 2_000,
    notFoundGraceMs: 60_000,
    callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET',
  }),
];

const stack = useTestStack({ providers, certify: [['pay-backup', 'charge']] });

const ended = (job: JobView): boolean =>
  job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled';

async function attemptRow(attemptId: string) {
  const { rows } = await stack.pool.query<{
    state: string;
    started: boolean;
    call_ended: boolean;
    success_answered: boolean;
    error_code: string | null;
  }>(
    `SELECT state, started_at IS NOT NULL AS started, call_ended_at IS NOT NULL AS call_ended,
            success_answered_at IS NOT NULL AS success_answered, error ->> 'code' AS error_code
       FROM attempts WHERE id = $1`,
    [attemptId],
  );
  return rows[0]!;
}

/**
 * Waits until the execution let go of its begin is done with the attempt: it either wrote over
 * it (the row left `running`) or said that another execution had begun the call.
 */
async function untilSecondExecutionDone(attemptId: string) {
  await eventually(
    async () => ({
      row: await attemptRow(attemptId),
      said: stack
        .serviceLogs()
        .some((line) => line.attemptId === attemptId && line.event === 'call_begun_elsewhere'),
    }),
    (seen) => seen.said || seen.row.state !== 'running' || seen.row.call_ended,
  );
}

/** The job's owner starts it again on Temporal, with the key and intent it sent first. */
async function startJobAgain(key: string, body: ReturnType<typeof chargeBody>): Promise<void> {
  await startJob(stack.temporal, {
    owner: TEST_OWNER,
    idempotencyKey: key,
    taskQueue: stack.taskQueue,
    ...body,
  });
}

/** How the terminated job is taken up again: by its owner's start, or by the sweeper. */
const takeUps: Array<
  [string, (key: string, body: ReturnType<typeof chargeBody>) => Promise<void>]
> = [
  [
    'startJob again',
    async (key, body) => {
      await startJob(stack.temporal, {
        owner: TEST_OWNER,
        idempotencyKey: key,
        taskQueue: stack.taskQueue,
        ...body,
      });
    },
  ],
  [
    'the sweeper',
    async () => {
      await sweepJobs(
        { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
        { olderThanMs: 0 },
      );
    },
  ],
];

test.each(takeUps)(
  "a run terminated while its call's begin waits, then taken up by %s: the second execution sends nothing and writes nothing, and the one charge is the job's result",
  async (_how, takeUp) => {
    const key = freshKey('terminated-mid-begin');
    const body = chargeBody(['pay']);
    // The provider holds the charge it gets until the test opens the gate.
    stack.simulator.inject({
      route: 'charge',
      account: body.input.account,
      fault: { kind: 'hold', gate: key },
    });
    // The first run's begin (`starting → running`) waits in the driver, before it is sent.
    const firstBegin = holdStatement('attempts.begin-provider-call', (values) =>
      String(values[0]).endsWith(':1'),
    );
    try {
      const created = await createJob(stack, body, key);
      const attemptId = `${created.id}:1`;
      await firstBegin.reached;
      await stack.temporal.workflow
        .getHandle(created.workflowId)
        .terminate('an operator terminates the run mid-call');
      // A new run adopts attempt 1, still `starting`, and calls for it: that call begins and leaves.
      await takeUp(key, body);
      await untilRequestReceived(stack, attemptId);
      // The first run's execution goes on now, and finds the call begun by another.
      firstBegin.release();
      await firstBegin.answered;
      await untilSecondExecutionDone(attemptId);
      // Nothing was written over the call in flight: it runs, its end unwritten (it may still land).
      expect(await callSnapshot(stack, attemptId)).toEqual({
        attempt: { state: 'running', callEnded: false },
        requests: [attemptId],
        effects: [],
      });
      stack.simulator.openGate(key);
      const done = await untilJob(stack, created.id, ended);
      expect(done).toMatchObject({ status: 'succeeded', completedBy: attemptId });
      expect(providerSaw(stack, created.id)).toEqual({
        requests: [attemptId],
        effects: [attemptId],
      });
    } finally {
      firstBegin.restore();
    }
  },
);

/** The input of a history event's scheduled activity, as JSON. */
function activityInput(event: {
  activityTaskScheduledEventAttributes?: {
    input?: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null;
  } | null;
}): { attemptId?: string } {
  const data = event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { attemptId?: string }) : {};
}

test("a reset of the job's run to just before it called the fallback schedules that call again: the second execution sends nothing, and the charge in flight is the job's result", async () => {
  const key = freshKey('reset-mid-call');
  const body = chargeBody(['pay', 'pay-backup']);
  const account = body.input.account;
  // The primary refuses before any work; the fallback's charge is held until the gate opens.
  stack.simulator.inject({ route: 'charge', account, fault: { kind: 'fail_before', status: 400 } });
  stack.simulator.inject({ route: 'charge', account, fault: { kind: 'hold', gate: key } });
  const created = await createJob(stack, body, key);
  const [first, second] = [`${created.id}:1`, `${created.id}:2`];
  await untilRequestReceived(stack, second);

  const handle = stack.temporal.workflow.getHandle(created.workflowId);
  const { runId } = await handle.describe();
  const history = await handle.fetchHistory();
  const scheduled = history.events?.find(
    (event) =>
      event.activityTaskScheduledEventAttributes?.activityType?.name === 'callProvider' &&
      activityInput(event).attemptId === second,
  );
  const resetTo = scheduled?.activityTaskScheduledEventAttributes?.workflowTaskCompletedEventId;
  expect(resetTo).toBeTruthy();
  await stack.temporal.workflowService.resetWorkflowExecution({
    namespace: stack.temporal.options.namespace,
    workflowExecution: { workflowId: created.workflowId, runId },
    reason: 'an operator resets the run to just before it called the fallback',
    workflowTaskFinishEventId: resetTo,
    requestId: randomUUID(),
  });
  // The reset run calls for attempt 2 again; that execution finds the call begun, and sends nothing.
  await untilSecondExecutionDone(second);
  const during = await callSnapshot(stack, second);
  expect(during.attempt?.callEnded).toBe(false);
  expect(['running', 'unknown']).toContain(during.attempt?.state);
  expect(during.effects).toEqual([]);

  stack.simulator.openGate(key);
  const done = await untilJob(stack, created.id, ended);
  expect(done).toMatchObject({ status: 'succeeded', completedBy: second });
  expect(providerSaw(stack, created.id)).toEqual({ requests: [first, second], effects: [second] });
});

test('a call whose begin waited past its heartbeat timeout sent nothing, and is tried again on its provider: a one-provider charge succeeds, charged once', async () => {
  const begin = holdStatement('attempts.begin-provider-call', (values) =>
    String(values[0]).endsWith(':1'),
  );
  try {
    const created = await createJob(stack, chargeBody(['pay-retried']));
    const [first, second] = [`${created.id}:1`, `${created.id}:2`];
    await begin.reached;
    // Temporal gives up on the silent call; nothing had been sent, and the attempt says so.
    const done = await untilJob(stack, created.id, ended);
    expect(done.attempts.map((a) => [a.state, a.error?.code ?? null])).toEqual([
      ['failed', 'never_sent'],
      ['succeeded', null],
    ]);
    expect(done.completedBy).toBe(second);
    // The begin let go now finds the attempt settled: it begins nothing, so nothing is sent.
    begin.release();
    await begin.answered;
    expect(await attemptRow(first)).toMatchObject({ state: 'failed', started: false });
    expect(providerSaw(stack, created.id)).toEqual({ requests: [second], effects: [second] });
  } finally {
    begin.restore();
  }
});

test("a run terminated while its fallback's call waits for its begin, taken up again: the new run finds that attempt never sent and tries the fallback again, so the job succeeds on it, charged once", async () => {
  const key = freshKey('terminated-before-fallback-begin');
  const body = chargeBody(['pay', 'pay-backup']);
  // The primary refuses before any work; the fallback's first begin waits in the driver.
  stack.simulator.inject({
    route: 'charge',
    account: body.input.account,
    fault: { kind: 'fail_before', status: 400 },
  });
  const fallbackBegin = holdStatement('attempts.begin-provider-call', (values) =>
    String(values[0]).endsWith(':2'),
  );
  try {
    const created = await createJob(stack, body, key);
    const [first, second, third] = [`${created.id}:1`, `${created.id}:2`, `${created.id}:3`];
    await fallbackBegin.reached;
    await stack.temporal.workflow
      .getHandle(created.workflowId)
      .terminate('an operator terminates the run before its fallback is called');
    await startJobAgain(key, body);
    const done = await untilJob(stack, created.id, ended);
    expect(done).toMatchObject({ status: 'succeeded', completedBy: third });
    expect(done.attempts.map((a) => [a.provider, a.state, a.error?.code ?? null])).toEqual([
      ['pay', 'failed', 'http_400'],
      ['pay-backup', 'failed', 'never_sent'],
      ['pay-backup', 'succeeded', null],
    ]);
    // The old run's begin, let go, finds its attempt settled and sends nothing.
    fallbackBegin.release();
    await fallbackBegin.answered;
    expect(await attemptRow(second)).toMatchObject({ state: 'failed', started: false });
    expect(providerSaw(stack, created.id)).toEqual({
      requests: [first, third],
      effects: [third],
    });
  } finally {
    fallbackBegin.restore();
  }
});

test('a run terminated after it chose to retry a call that never began, before it noted the retry: the new run retries it all the same', async () => {
  const key = freshKey('terminated-before-retry-noted');
  const body = chargeBody(['pay-retried']);
  const begin = holdStatement('attempts.begin-provider-call', (values) =>
    String(values[0]).endsWith(':1'),
  );
  // The run's note of its retry waits in the driver: the retry is decided, not yet noted.
  const note = holdStatement('jobs.add-counted-note', (values) =>
    String(values[1]).includes('"retry_scheduled"'),
  );
  try {
    const created = await createJob(stack, body, key);
    const [first, second] = [`${created.id}:1`, `${created.id}:2`];
    await begin.reached;
    await note.reached;
    await stack.temporal.workflow
      .getHandle(created.workflowId)
      .terminate('an operator terminates the run as it retries');
    await startJobAgain(key, body);
    const done = await untilJob(stack, created.id, ended);
    expect(done).toMatchObject({ status: 'succeeded', completedBy: second });
    expect(done.attempts.map((a) => [a.state, a.error?.code ?? null])).toEqual([
      ['failed', 'never_sent'],
      ['succeeded', null],
    ]);
    begin.release();
    await begin.answered;
    expect(await attemptRow(first)).toMatchObject({ state: 'failed', started: false });
    expect(providerSaw(stack, created.id)).toEqual({ requests: [second], effects: [second] });
  } finally {
    note.restore();
    begin.restore();
  }
});

async function sendCallback(provider: string, report: Record<string, unknown>) {
  const payload = JSON.stringify(report);
  return fetch(`${stack.apiUrl}/v1/callbacks/${provider}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'onejob-signature': signCallback(CALLBACK_SECRET, payload),
    },
    body: payload,
  });
}

test("a signed failed callback that comes once the call's deadline has passed, while the call's 2xx is still being written, waits out the grace: the 2xx is evidence of work and outranks it", async () => {
  const body = chargeBody(['pay-called-back']);
  // The provider charges, sends its 2xx status line and headers, and then never the body.
  stack.simulator.inject({
    route: 'charge',
    account: body.input.account,
    fault: { kind: 'stall_after_headers' },
  });
  // The worker's write of the call's end (when its window closes) waits in the driver.
  const end = holdStatement('attempts.mark-call-ended', (values) =>
    String(values[0]).endsWith(':1'),
  );
  let attemptId = '';
  try {
    const created = await createJob(stack, body);
    attemptId = `${created.id}:1`;
    await end.reached;
    // PostgreSQL's clock says the call can no longer land: its late-result window has passed.
    await eventually(
      async () =>
        (
          await stack.pool.query<{ over: boolean }>(
            'SELECT call_deadline_at < now() AS over FROM attempts WHERE id = $1',
            [attemptId],
          )
        ).rows[0]!.over,
      (over) => over,
    );
    const answer = await sendCallback('pay-called-back', {
      attemptId,
      status: 'failed',
      error: 'card declined',
    });
    expect(answer.status).toBe(200);
    // Held: the call's own end may still be on its way.
    expect(await attemptRow(attemptId)).toMatchObject({ state: 'unknown', call_ended: false });
    end.release();
    await end.answered;
    const settled = await eventually(
      () => attemptRow(attemptId),
      (row) => row.call_ended,
    );
    expect(settled).toMatchObject({ state: 'unknown', success_answered: true });
    expect(providerSaw(stack, created.id)).toEqual({
      requests: [attemptId],
      effects: [attemptId],
    });
  } finally {
    end.restore();
    if (attemptId)
      await operator(stack, 'POST', `/jobs/${attemptId.split(':')[0]}/cancel`, {
        reason: 'test over',
      });
  }
});
