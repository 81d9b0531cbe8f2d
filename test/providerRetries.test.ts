import type { ProviderConfig } from '../src/providers/provider';
import { sweepJobs } from '../src/service/sweeper';
import { runCli } from './support/cli';
import {
  chargeBody,
  createJob,
  operator,
  readJob,
  succeeded,
  summarizeBody,
  triedOf,
  untilJob,
} from './support/jobs';
import { eventually } from './support/polling';
import { effectsFor, requestsFor } from './support/providerLedger';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';
import { untilWorkflowClosed, workflowStatus } from './support/temporal';

/**
 * Retry, then fall back: a failure that may heal is tried again on the same provider, as an
 * attempt of its own (its own idempotency key), after a durable wait; one that would fail the
 * same way, or may have taken effect, is not.
 */
const retry = { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 5_000 };
const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat', 'sim-steady', { retry }),
  chatProvider(url, 'chat-backup', 'sim-backup', { retry }),
  chatProvider(url, 'chat-once', 'sim-steady', { retry: false }),
  chatProvider(url, 'chat-short-window', 'sim-steady', { retry, lateResultTimeoutMs: 2_000 }),
  // Its hung charge must time out: unknown, never retried.
  payProvider(url, 'pay', { retry, timeoutMs: TIMES_OUT_SOON_MS }),
  payProvider(url, 'pay-backup', { retry }),
];
const stack = useTestStack({
  providers,
  workerProcess: true,
  certify: [
    ['chat-backup', 'summarize'],
    ['pay-backup', 'charge'],
  ],
});
afterEach(() => stack.simulator.clearFaults());

test('a single-provider plan survives a 429: the retry is a new attempt on the same provider, sent no sooner than Retry-After after the first ended', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'rate_limited', retryAfterSeconds: 1 },
  });
  const job = await createJob(stack, summarizeBody(['chat']));
  const done = await untilJob(stack, job.id, succeeded);

  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat', 'succeeded'],
  ]);
  expect(done.completedBy).toBe(`${job.id}:2`);
  expect(done.attempts[0]?.error).toMatchObject({
    code: 'http_429',
    httpStatus: 429,
    provider: { retryAfterMs: 1_000 },
  });
  // Each try is its own attempt, with its own idempotency key.
  expect(requestsFor(stack, job.id, 'chat').map((r) => r.idempotencyKey)).toEqual([
    `${job.id}:1`,
    `${job.id}:2`,
  ]);
  const [first, second] = await attemptRows(stack.pool, job.id);
  expect(second!.created_at.getTime() - first!.finished_at!.getTime()).toBeGreaterThanOrEqual(
    1_000,
  );
  expect(done.notes).toContainEqual(
    expect.objectContaining({
      event: 'retry_scheduled',
      provider: 'chat',
      afterAttempt: `${job.id}:1`,
      nextTry: 2,
      reason: 'retrying chat in 1 s (429, Retry-After 1)',
    }),
  );
});

test('two 503s, then success: three attempts on the same provider, the third wins', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    times: 2,
    fault: { kind: 'fail_before', status: 503 },
  });
  const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
  const done = await untilJob(stack, job.id, succeeded);
  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat', 'failed'],
    ['chat', 'succeeded'],
  ]);
  expect(requestsFor(stack, job.id, 'chat')).toHaveLength(3);
});

test('a call without side effects that hangs until its late-result window closes is retried on its provider like a timeout: a single-provider plan succeeds', async () => {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', times: 1, fault: { kind: 'hang' } });
  const job = await createJob(stack, summarizeBody(['chat-short-window']));
  const done = await untilJob(
    stack,
    job.id,
    (j) => j.status === 'succeeded' || j.status === 'failed',
  );
  expect(done.attempts[0]?.error).toMatchObject({ code: 'late_window_exceeded' });
  expect(triedOf(done)).toEqual([
    ['chat-short-window', 'failed'],
    ['chat-short-window', 'succeeded'],
  ]);
});

test('once a provider’s retries are spent the plan falls back, and the fallback never goes back to it', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    times: 3,
    fault: { kind: 'overloaded' },
  });
  const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
  const done = await untilJob(stack, job.id, succeeded);
  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat', 'failed'],
    ['chat', 'failed'],
    ['chat-backup', 'succeeded'],
  ]);
});

test('a definite 400 is not retried: the same request would fail the same way, so the plan moves on', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 400 },
  });
  const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
  const done = await untilJob(stack, job.id, succeeded);
  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat-backup', 'succeeded'],
  ]);
  expect(done.notes.filter((n) => n.event === 'retry_scheduled')).toEqual([]);
});

test('a failure the provider says not to retry (x-should-retry: false) is not retried: the plan moves on', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 503, headers: { 'x-should-retry': 'false' } },
  });
  const job = await createJob(stack, summarizeBody(['chat', 'chat-backup']));
  const done = await untilJob(stack, job.id, succeeded);
  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat-backup', 'succeeded'],
  ]);
  expect(done.attempts[0]?.error).toMatchObject({
    code: 'http_503',
    provider: { shouldRetry: false },
  });
});

test('a provider with retry: false is never retried: a 429 on a single-provider plan fails the job', async () => {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'rate_limited' } });
  const job = await createJob(stack, summarizeBody(['chat-once']));
  const done = await untilJob(stack, job.id, (j) => j.status === 'failed');
  expect(triedOf(done)).toEqual([['chat-once', 'failed']]);
});

test('a charge refused with 429 before any work is retried on the same payment provider and charged once', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'rate_limited' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  const done = await untilJob(stack, job.id, succeeded);
  expect(triedOf(done)).toEqual([
    ['pay', 'failed'],
    ['pay', 'succeeded'],
  ]);
  expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([
    `${job.id}:1`,
    `${job.id}:2`,
  ]);
  expect(effectsFor(stack, job.id)).toHaveLength(1);
});

test('a hung charge is never retried: it is unknown and blocks, and once an operator fails it the plan falls back', async () => {
  stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
  const job = await createJob(stack, chargeBody(['pay', 'pay-backup']));
  await untilJob(stack, job.id, (j) => j.status === 'unknown');
  // The workflow has looked at it (the status lookup says "still processing") and sent nothing more.
  await eventually(
    () => workflowStatus(stack, job.workflowId),
    (status) => /still being processed|HTTP 409/.test(status.waitingOn),
  );
  expect(requestsFor(stack, job.id).map((r) => r.idempotencyKey)).toEqual([`${job.id}:1`]);

  const resolved = await operator(stack, 'POST', `/attempts/${job.id}:1/resolve`, {
    outcome: 'failed',
    reason: 'the bank confirms no charge',
  });
  expect(resolved.status).toBe(200);
  const done = await untilJob(stack, job.id, succeeded);
  // An operator's verdict is not the call's own failure: no retry on pay, the fallback runs.
  expect(triedOf(done)).toEqual([
    ['pay', 'failed'],
    ['pay-backup', 'succeeded'],
  ]);
  expect(effectsFor(stack, job.id).map((e) => e.idempotencyKey)).toEqual([`${job.id}:2`]);
});

test('a retry planned when its run was terminated is kept by the run the sweeper starts, neither lost nor shortened: the single-provider plan still succeeds', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'rate_limited', retryAfterSeconds: 3 },
  });
  const job = await createJob(stack, summarizeBody(['chat']));
  // The run waits out the Retry-After before its retry; an operator terminates it meanwhile.
  await eventually(
    () => readJob(stack, job.id),
    (seen) => seen.notes.some((note) => note.event === 'retry_scheduled'),
  );
  await stack.temporal.workflow.getHandle(job.workflowId).terminate('terminated during the wait');
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('TERMINATED');
  // (The worker's own sweeper may get there first: either way one new run takes the job up.)
  await sweepJobs(
    { pool: stack.pool, temporal: stack.temporal, taskQueue: stack.taskQueue },
    { olderThanMs: 0 },
  );

  const done = await untilJob(stack, job.id, (seen) => seen.status !== 'running', 60_000);
  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat', 'succeeded'],
  ]);
  const [first, second] = await attemptRows(stack.pool, job.id);
  expect(second!.created_at.getTime() - first!.finished_at!.getTime()).toBeGreaterThanOrEqual(
    3_000,
  );
});

test('the wait before a retry is shown on the job (status query, GET, CLI) and survives a worker restart, neither lost nor shortened', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'rate_limited', retryAfterSeconds: 4 },
  });
  const job = await createJob(stack, summarizeBody(['chat']));
  // The workflow is waiting on its timer: the job's details say what for.
  const waiting = await eventually(
    () => workflowStatus(stack, job.workflowId),
    (status) => status.waitingOn.startsWith('retrying'),
  );
  expect(waiting).toMatchObject({
    status: 'running',
    waitingOn: 'retrying chat in 4 s (429, Retry-After 4)',
  });
  expect((await readJob(stack, job.id)).notes).toContainEqual(
    expect.objectContaining({ reason: 'retrying chat in 4 s (429, Retry-After 4)' }),
  );

  await stack.killWorker('SIGKILL');
  await stack.restartWorker();
  const done = await untilJob(stack, job.id, succeeded);
  expect(triedOf(done)).toEqual([
    ['chat', 'failed'],
    ['chat', 'succeeded'],
  ]);
  const [first, second] = await attemptRows(stack.pool, job.id);
  expect(second!.created_at.getTime() - first!.finished_at!.getTime()).toBeGreaterThanOrEqual(
    4_000,
  );
  // The CLI shows the same note.
  const shown = await runCli(stack, ['jobs', 'show', job.id]);
  expect(shown.stdout).toContain('retry_scheduled: retrying chat in 4 s (429, Retry-After 4)');
});
