import {
  Client,
  Connection,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import type { JobActivities, ProviderCallActivities } from '../src/activities';
import { DEFAULTS } from '../src/domain/defaults';
import { FAILURES } from '../src/domain/failures';
import type { AttemptState, TerminalJobStatus } from '../src/domain/job';
import {
  attemptSettledSignal,
  JOB_WORKFLOW_TYPE,
  requestAttemptUpdate,
  resolveAttemptUpdate,
  statusQuery,
  type AttemptOutcome,
  type JobPlan,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type PlannedProvider,
  type ReconcileOutcome,
} from '../src/workflows/definitions';
import { providerCallTaskQueue } from '../src/workflows/taskQueues';
import { harness } from './support/harness';
import { eventually } from './support/polling';
import { quietTemporalRuntime } from './support/worker';

/**
 * The job workflow alone, on the test Temporal server, with activities that keep the job in
 * memory: no API, no PostgreSQL, no simulator. It pins what the workflow decides (refusals,
 * failover, the hedge rule, the reconcile backoff) in seconds. What a provider does is scripted
 * per provider name.
 */
type Script =
  | { kind: 'answer' }
  | { kind: 'fail' }
  | { kind: 'unknown' }
  | { kind: 'held'; release: Promise<void> };

interface FakeAttempt {
  id: string;
  provider: string;
  state: AttemptState;
}

interface FakeJob {
  plan: JobPlan;
  attempts: FakeAttempt[];
  terminal: TerminalJobStatus | null;
  winner: string | null;
  scripts: Record<string, Script>;
  /** What each look at an unknown attempt finds, in order; then it stays unknown. */
  lookups: AttemptState[];
  /** The next look waits here once it has begun (and says so), before it finds anything. */
  heldLook?: { begun: () => void; release: Promise<void> };
  failure?: Record<string, unknown>;
  /**
   * Providers whose next attempt row is refused as unavailable (a cooldown, an open breaker)
   * once the gate opens; once only.
   */
  refusals: Record<string, { opened: Promise<void>; untilMs: number }>;
}

const jobs = new Map<string, FakeJob>();
const jobOf = (attemptId: string): FakeJob => jobs.get(attemptId.split(':')[0]!)!;
const attemptOf = (attemptId: string): FakeAttempt =>
  jobOf(attemptId).attempts.find((a) => a.id === attemptId)!;

function outcome(job: FakeJob, attempt: FakeAttempt): AttemptOutcome {
  return {
    attemptId: attempt.id,
    state: attempt.state,
    winnerAttemptId: job.winner,
    jobStatus: job.terminal,
  };
}

/** A provider's refusal as the call reports it (providerCallSettlement.ts). */
const REFUSAL = {
  code: 'http_429',
  certainty: 'definite',
  httpStatus: 429,
  provider: { type: 'rate_limit_error', retryAfterMs: 1_000 },
  message: 'rate limited',
};

/** The compare-and-swap, in memory: the first answer wins, later ones lose. */
function answer(attemptId: string): AttemptOutcome {
  const job = jobOf(attemptId);
  const attempt = attemptOf(attemptId);
  if (job.terminal) attempt.state = 'lost';
  else {
    attempt.state = 'succeeded';
    job.terminal = 'succeeded';
    job.winner = attempt.id;
  }
  return outcome(job, attempt);
}

const jobActivities: Partial<JobActivities> = {
  async admitJob(input) {
    return jobs.get(input.jobId!)!.plan;
  },
  async startAttempt({ jobId, seq, provider }) {
    const job = jobs.get(jobId)!;
    const refusal = job.refusals[provider];
    if (refusal) {
      delete job.refusals[provider];
      await refusal.opened;
      throw ApplicationFailure.create({
        type: FAILURES.providerUnavailable,
        message: `provider ${provider} takes no new attempt for now`,
        details: [{ until: new Date(Date.now() + refusal.untilMs).toISOString(), reason: 'test' }],
        nonRetryable: true,
      });
    }
    // As the attempts table: one row per (job, number), and a number is never a second row.
    const taken = job.attempts.find((a) => a.id === `${jobId}:${seq}`);
    if (taken)
      throw ApplicationFailure.nonRetryable(
        `attempt ${taken.id} exists for provider ${taken.provider}, not ${provider}`,
      );
    const attempt: FakeAttempt = { id: `${jobId}:${seq}`, provider, state: 'starting' };
    job.attempts.push(attempt);
    return { id: attempt.id, state: attempt.state };
  },
  async abandonAttempt({ attemptId }) {
    const attempt = attemptOf(attemptId);
    if (attempt.state === 'running') attempt.state = 'unknown';
    return outcome(jobOf(attemptId), attempt);
  },
  async reconcileAttempt({ attemptId }): Promise<ReconcileOutcome> {
    const job = jobOf(attemptId);
    const held = job.heldLook;
    if (held) {
      job.heldLook = undefined;
      held.begun();
      await held.release;
    }
    const attempt = attemptOf(attemptId);
    const found = attempt.state === 'unknown' ? job.lookups.shift() : undefined;
    if (found === 'succeeded') return answer(attemptId);
    if (found) attempt.state = found;
    return { ...outcome(job, attempt), detail: 'the provider has no record yet' };
  },
  async resolveAttempt({ attemptId, outcome: verdict }) {
    if (verdict === 'succeeded') return answer(attemptId);
    attemptOf(attemptId).state = 'failed';
    return outcome(jobOf(attemptId), attemptOf(attemptId));
  },
  async cancelJob({ jobId }) {
    const job = jobs.get(jobId)!;
    job.terminal ??= 'cancelled';
    return { status: job.terminal, completedBy: job.winner };
  },
  async failJob({ jobId, failure }) {
    const job = jobs.get(jobId)!;
    job.terminal ??= 'failed';
    job.failure = failure;
    return { status: job.terminal, completedBy: job.winner };
  },
  // No owner here has webhooks: nothing ever waits to be sent.
  async webhookEventsWaiting() {
    return { eventKeys: [], retry: DEFAULTS.webhookRetry };
  },
  async raiseNeedsOperator() {
    return { eventKey: null, retry: DEFAULTS.webhookRetry };
  },
};

const providerCalls: ProviderCallActivities = {
  async callProvider({ attemptId }) {
    const job = jobOf(attemptId);
    const attempt = attemptOf(attemptId);
    attempt.state = 'running';
    const script = job.scripts[attempt.provider] ?? { kind: 'answer' };
    if (script.kind === 'held') await script.release;
    if (script.kind === 'fail') {
      attempt.state = 'failed';
      // As the real call reports a refusal: the provider's own word on it under `provider`.
      return { ...outcome(job, attempt), error: REFUSAL };
    } else if (script.kind === 'unknown') attempt.state = 'unknown';
    else return answer(attemptId);
    return outcome(job, attempt);
  },
  async deliverWebhooks() {
    throw new Error('no webhook is ever due in these tests');
  },
};

const provider = (name: string, extra: Partial<PlannedProvider> = {}): PlannedProvider => ({
  name,
  timeoutMs: 30_000,
  heartbeatTimeoutMs: 30_000,
  sideEffects: false,
  ...extra,
});

let client: Client;
let connection: Connection;
let workers: Worker[] = [];
let running: Promise<void>[] = [];
const taskQueue = `stubbed-${randomUUID()}`;

beforeAll(async () => {
  quietTemporalRuntime();
  const { temporalAddress, workflowBundlePath } = harness();
  connection = await Connection.connect({ address: temporalAddress });
  client = new Client({ connection });
  const native = await NativeConnection.connect({ address: temporalAddress });
  workers = [
    await Worker.create({
      connection: native,
      taskQueue,
      workflowBundle: { codePath: workflowBundlePath },
      activities: jobActivities,
    }),
    await Worker.create({
      connection: native,
      taskQueue: providerCallTaskQueue(taskQueue),
      activities: providerCalls,
    }),
  ];
  running = workers.map((w) => w.run());
});

afterAll(async () => {
  for (const worker of workers) worker.shutdown();
  await Promise.all(running);
  await connection?.close();
});

/** Starts a job workflow on a plan, with providers behaving as scripted. */
async function startJob(
  plan: Partial<JobPlan>,
  scripts: Record<string, Script> = {},
  lookups: AttemptState[] = [],
  refusals: FakeJob['refusals'] = {},
) {
  const jobId = randomUUID();
  const providers = plan.providers ?? [provider('a'), provider('b')];
  jobs.set(jobId, {
    plan: {
      jobId,
      requestFingerprint: 'fingerprint',
      type: 'summarize',
      mode: 'exclusive',
      providers,
      compatible: providers,
      hedgeDelayMs: 60_000,
      skipped: [],
      terminalStatus: null,
      completedBy: null,
      attempts: [],
      maxAttempts: 16,
      historyEventLimit: 10_000,
      reconcileMaxDelayMs: 600_000,
      ...plan,
    },
    attempts: [],
    terminal: null,
    winner: null,
    scripts,
    lookups,
    refusals,
  });
  const input: JobWorkflowInput = {
    jobId,
    ownerId: 'stub',
    idempotencyKey: jobId,
    requestFingerprint: 'fingerprint',
  };
  const handle = await client.workflow.start(JOB_WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `stubbed/${jobId}`,
    args: [input],
  });
  return { jobId, handle, job: jobs.get(jobId)! };
}

/** A gate a held provider call waits at. */
function gate(): { release: () => void; script: Script } {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { release, script: { kind: 'held', release: opened } };
}

async function refusalOf(update: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await update.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

test('a definite failure fails over to the next provider, whose answer is the result', async () => {
  const { jobId, handle, job } = await startJob({}, { a: { kind: 'fail' } });
  await expect(handle.result()).resolves.toEqual<JobWorkflowResult>({
    jobId,
    status: 'succeeded',
    completedBy: `${jobId}:2`,
  });
  expect(job.attempts.map((a) => [a.provider, a.state])).toEqual([
    ['a', 'failed'],
    ['b', 'succeeded'],
  ]);
});

test("when every provider fails, the job fails with the failure of each, each under its provider's name and with what the provider said", async () => {
  const { jobId, handle, job } = await startJob({}, { a: { kind: 'fail' }, b: { kind: 'fail' } });
  expect((await handle.result()).status).toBe('failed');
  const { provider: said, ...refusal } = REFUSAL;
  expect(job.failure).toEqual({
    code: 'all_attempts_failed',
    attempts: [
      { attemptId: `${jobId}:1`, provider: 'a', ...refusal, providerDetail: said },
      { attemptId: `${jobId}:2`, provider: 'b', ...refusal, providerDetail: said },
    ],
  });
});

test('in exclusive mode a "try again" is refused while an attempt runs, typed, and leaves no trace in the history', async () => {
  const held = gate();
  const { jobId, handle } = await startJob({}, { a: held.script });
  await eventually(
    () => handle.query(statusQuery),
    (s) => s.status === 'running',
  );
  const refusal = await refusalOf(handle.executeUpdate(requestAttemptUpdate, { args: [{}] }));
  expect(refusal.type).toBe(FAILURES.attemptInFlight);
  expect(refusal.message).toBe('attempt 1 on a is starting');
  const notAnAttempt = await refusalOf(
    handle.executeUpdate(resolveAttemptUpdate, {
      args: [{ attemptId: `${jobId}:9`, outcome: 'failed', reason: 'x', operator: 'op' }],
    }),
  );
  expect(notAnAttempt.type).toBe(FAILURES.attemptNotResolvable);
  held.release();
  expect((await handle.result()).completedBy).toBe(`${jobId}:1`);
  // A validator's refusal is not recorded: replays never meet it.
  const events = (await handle.fetchHistory()).events ?? [];
  expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toEqual([]);
});

test('in hedged mode the next provider starts after the hedge delay of silence, the first answer wins, and the slow one loses', async () => {
  const held = gate();
  const { jobId, handle, job } = await startJob(
    { mode: 'hedged', hedgeDelayMs: 200 },
    { a: held.script },
  );
  await expect(handle.result()).resolves.toMatchObject({ completedBy: `${jobId}:2` });
  const timers = ((await handle.fetchHistory()).events ?? []).filter(
    (e) => e.timerStartedEventAttributes,
  );
  const summaries = timers.map((e) => Buffer.from(e.userMetadata?.summary?.data ?? []).toString());
  expect(summaries).toContain('"hedge delay 200 ms"');
  held.release();
  await eventually(
    async () => job.attempts[0]!.state,
    (state) => state === 'lost',
  );
});

test('an attempt number taken by a hedge is never taken again when the row it raced with is refused (a breaker opened meanwhile)', async () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  // The primary's row waits while the hedge starts, then is refused; the hedge's call fails.
  const { jobId, handle, job } = await startJob(
    { mode: 'hedged', hedgeDelayMs: 50 },
    { b: { kind: 'fail' } },
    [],
    { a: { opened, untilMs: 200 } },
  );
  await eventually(
    async () => job.attempts.map((a) => [a.provider, a.state]),
    (attempts) => JSON.stringify(attempts) === JSON.stringify([['b', 'failed']]),
  );
  open();
  // Once its cooldown passes the primary gets an attempt of its own: number 3, not the hedge's 2.
  const result = await handle.result();
  expect(job.attempts.map((a) => [a.id.split(':')[1], a.provider, a.state])).toEqual([
    ['2', 'b', 'failed'],
    ['3', 'a', 'succeeded'],
  ]);
  expect(result).toMatchObject({ status: 'succeeded', completedBy: `${jobId}:3` });
});

test('a hedged job refuses a user’s request for a provider with side effects, typed', async () => {
  const held = gate();
  const pay = provider('pay', { sideEffects: true });
  const { handle } = await startJob(
    { mode: 'hedged', compatible: [provider('a'), provider('b'), pay] },
    { a: held.script, b: held.script },
  );
  await eventually(
    () => handle.query(statusQuery),
    (s) => s.status === 'running',
  );
  const refusal = await refusalOf(
    handle.executeUpdate(requestAttemptUpdate, { args: [{ provider: 'pay' }] }),
  );
  expect(refusal.type).toBe(FAILURES.hedgingNotAllowed);
  held.release();
  await handle.result();
});

/** The durations of the timers a workflow started, in ms. */
async function timersOf(handle: WorkflowHandle): Promise<number[]> {
  return ((await handle.fetchHistory()).events ?? [])
    .map((e) => e.timerStartedEventAttributes?.startToFireTimeout)
    .filter((t) => t !== undefined && t !== null)
    .map((t) => Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6));
}

test("a workflow blocked on an unknown attempt sleeps between looks of its own, one self-look period each (the backoff is the reconciler's), and its found answer wins", async () => {
  const { jobId, handle, job } = await startJob(
    { reconcileFirstDelayMs: 100, reconcileMaxDelayMs: 400, blockedSelfLookMs: 300 },
    { a: { kind: 'unknown' } },
    ['unknown', 'unknown', 'unknown', 'succeeded'],
  );
  await expect(handle.result()).resolves.toMatchObject({ completedBy: `${jobId}:1` });
  expect(await timersOf(handle)).toEqual([300, 300, 300]);
  // The plan never moved on: nothing else ran while the attempt was unknown.
  expect(job.attempts.map((a) => a.provider)).toEqual(['a']);
});

test('a nudge wakes a sleeping blocked workflow to look again at once', async () => {
  const { jobId, handle } = await startJob(
    { blockedSelfLookMs: 600_000 },
    { a: { kind: 'unknown' } },
    ['unknown', 'succeeded'],
  );
  await eventually(
    () => handle.query(statusQuery),
    (s) => s.status === 'unknown',
  );
  await handle.signal(attemptSettledSignal, { attemptId: `${jobId}:1` });
  await expect(handle.result()).resolves.toMatchObject({ completedBy: `${jobId}:1` });
  expect(await timersOf(handle)).toEqual([600_000]);
});

test('a nudge that arrives while the blocked workflow is looking wakes the next look: it is not erased by the look it came during', async () => {
  const { jobId, handle, job } = await startJob(
    { blockedSelfLookMs: 600_000 },
    { a: { kind: 'unknown' } },
    ['unknown', 'unknown', 'succeeded'],
  );
  // The first look finds it unknown; the second is held once it has begun.
  await eventually(
    () => handle.query(statusQuery),
    (s) => s.status === 'unknown',
  );
  let begun!: () => void;
  const looking = new Promise<void>((resolve) => (begun = resolve));
  let release!: () => void;
  job.heldLook = { begun, release: new Promise<void>((resolve) => (release = resolve)) };
  await handle.signal(attemptSettledSignal, { attemptId: `${jobId}:1` });
  await looking;
  // The attempt settles now, while that look runs (which still finds it unknown): its nudge
  // comes during the look.
  await handle.signal(attemptSettledSignal, { attemptId: `${jobId}:1` });
  release();
  await expect(handle.result()).resolves.toMatchObject({ completedBy: `${jobId}:1` });
});
