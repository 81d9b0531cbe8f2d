import { defaultPayloadConverter } from '@temporalio/common';
import pg from 'pg';
import { attemptId } from '../../src/domain/job';
import { jobWorkflowId } from '../../src/domain/workflowId';
import { TEST_OWNER } from '../support/identities';
import { eventually } from '../support/polling';
import { providerSaw } from '../support/providerLedger';
import { chatProvider } from '../support/providers';
import { attemptRows } from '../support/rows';
import { certifyForSetup, startTestStack, type TestStack } from '../support/stack';

/**
 * Hedged mode, for side-effect-free jobs: after a delay of silence the fallback starts too;
 * whichever wins the compare-and-swap first is the result, and the other's answer is dropped.
 */
const TEXT = 'Attempt A leaves first and returns last. Attempt B leaves second and returns first.';

interface Job {
  id: string;
  status: string;
  workflowId: string;
  result: { summary: string } | null;
  completedBy: string | null;
}

/** POSTs a hedged summary over `providers`. */
function postHedgedSummary(
  stack: TestStack,
  key: string,
  providers = ['primary', 'fallback'],
): Promise<Response> {
  return stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body: { type: 'summarize', input: { text: TEXT }, providers, mode: 'hedged' },
  });
}

/** Creates a hedged summary over primary and fallback; returns its id. */
async function createHedgedJob(stack: TestStack, key: string): Promise<string> {
  const created = await postHedgedSummary(stack, key);
  expect(created.status).toBe(201);
  return ((await created.json()) as Job).id;
}

async function run(stack: TestStack, key: string): Promise<Job> {
  const id = await createHedgedJob(stack, key);
  return (await (await stack.request('GET', `/v1/jobs/${id}?wait=30`)).json()) as Job;
}

/** A hedged job whose primary's answer is held at `gate`; returns once that call is running. */
async function hedgedJobWithPrimaryHeld(stack: TestStack, gate: string): Promise<string> {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hold', gate } });
  const id = await createHedgedJob(stack, gate);
  await eventually(
    () => attemptRows(stack.pool, id),
    (rows) => rows[0]?.state === 'running',
  );
  return id;
}

/** A's answer is held at `gate` until B has won; then it comes back and must lose. */
async function expectReverseOrderOutcome(stack: TestStack, job: Job, gate: string): Promise<void> {
  const [a, b] = [`${job.id}:1`, `${job.id}:2`];
  expect(job.status).toBe('succeeded');
  expect(job.completedBy).toBe(b);
  // B's payload exactly: the backup model summarises with the last sentence.
  expect(job.result).toEqual({ summary: 'Attempt B leaves second and returns first.' });

  // A's answer still comes back; its compare-and-swap touches zero rows.
  stack.simulator.openGate(gate);
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'lost',
    15_000,
  );
  expect((await attemptRows(stack.pool, job.id)).map((r) => [r.id, r.state])).toEqual([
    [a, 'lost'],
    [b, 'succeeded'],
  ]);
  const { rows: races } = await stack.pool.query(
    'SELECT losing_attempt_id, winning_attempt_id, expected_version, observed_version FROM race_events WHERE job_id = $1',
    [job.id],
  );
  expect(races).toEqual([
    { losing_attempt_id: a, winning_attempt_id: b, expected_version: 0, observed_version: 1 },
  ]);
  const { rows } = await stack.pool.query('SELECT version, result FROM jobs WHERE id = $1', [
    job.id,
  ]);
  expect(rows).toEqual([
    { version: 1, result: { summary: 'Attempt B leaves second and returns first.' } },
  ]);
  // Both providers really did the work, once each: A's answer was produced, then dropped.
  const saw = providerSaw(stack, job.id, 'chat');
  expect([...saw.requests].sort()).toEqual([a, b]);
  expect([...saw.effects].sort()).toEqual([a, b]);
  // The drop is in the log an operator reads, naming the winner.
  const raceLogs = await eventually(
    async () => stack.serviceLogs().filter((l) => l.event === 'race_lost' && l.jobId === job.id),
    (lines) => lines.length > 0,
  );
  expect(raceLogs).toEqual([
    expect.objectContaining({ attemptId: a, winnerAttemptId: b, jobStatus: 'succeeded' }),
  ]);
}

describe('reverse-order finish', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({
      providers: (url) => [
        chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000 }),
        chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000 }),
        chatProvider(url, 'fallback-with-effects', 'sim-backup', {
          timeoutMs: 10_000,
          sideEffects: true,
        }),
      ],
      hedgeDelayMs: 300,
    });
    await certifyForSetup(stack, [['fallback', 'summarize']]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('A leaves first and returns last, B leaves second and returns first: B wins, A loses the CAS', async () => {
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'hold', gate: 'hedge-reverse' },
    });
    const job = await run(stack, 'hedge-reverse');
    await expectReverseOrderOutcome(stack, job, 'hedge-reverse');
  });

  test('hedged mode is refused for a job with side effects', async () => {
    const response = await stack.request('POST', '/v1/jobs', {
      headers: { 'idempotency-key': 'hedged-charge' },
      body: {
        type: 'charge',
        input: { amountCents: 100, currency: 'EUR', account: 'a' },
        mode: 'hedged',
      },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: '/problems/hedging-not-allowed' });
  });

  test('hedged mode is refused when a provider in the plan has side effects, though the job type has none; nothing is written', async () => {
    const response = await postHedgedSummary(stack, 'hedged-provider-with-effects', [
      'primary',
      'fallback-with-effects',
    ]);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      type: '/problems/hedging-not-allowed',
      jobTypeHasSideEffects: false,
      providersWithSideEffects: ['fallback-with-effects'],
    });
    const { rows } = await stack.pool.query('SELECT id FROM jobs WHERE idempotency_key = $1', [
      'hedged-provider-with-effects',
    ]);
    expect(rows).toEqual([]);
    // The same plan without that provider may be hedged.
    const allowed = await postHedgedSummary(stack, 'hedged-provider-without-effects');
    expect(allowed.status).toBe(201);
  });
});

describe('reverse-order finish after a timeout', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({
      // A times out long before the hedge delay: B starts at once, and A's late answer loses.
      providers: (url) => [
        chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 800 }),
        chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000 }),
      ],
      hedgeDelayMs: 30_000,
    });
    await certifyForSetup(stack, [['fallback', 'summarize']]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('A times out (unknown), B wins, and A’s late result is discarded and logged', async () => {
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'hold', gate: 'hedge-timeout' },
    });
    const job = await run(stack, 'hedge-timeout');
    await expectReverseOrderOutcome(stack, job, 'hedge-timeout');
  });
});

describe('a user asks for the fallback now', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({
      providers: (url) => [
        chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000 }),
        chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000 }),
        chatProvider(url, 'fallback-with-effects', 'sim-backup', {
          timeoutMs: 10_000,
          sideEffects: true,
        }),
      ],
      hedgeDelayMs: 30_000,
    });
    await certifyForSetup(stack, [
      ['fallback', 'summarize'],
      ['fallback-with-effects', 'summarize'],
    ]);
  });

  test('a hedged job takes no attempt on a provider with side effects, even when a user asks for it', async () => {
    const id = await hedgedJobWithPrimaryHeld(stack, 'hedge-effects');

    const refused = await stack.request('POST', `/v1/jobs/${id}/attempts`, {
      body: { provider: 'fallback-with-effects' },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      type: '/problems/hedging-not-allowed',
      detail: expect.stringMatching(/fallback-with-effects has side effects/),
    });
    // Nothing ran beside the held attempt.
    expect((await attemptRows(stack.pool, id)).map((r) => [r.provider, r.state])).toEqual([
      ['primary', 'running'],
    ]);
    expect(
      stack.simulator.requests().filter((r) => r.idempotencyKey.startsWith(`${id}:`)),
    ).toHaveLength(1);

    stack.simulator.openGate('hedge-effects');
    const done = (await (await stack.request('GET', `/v1/jobs/${id}?wait=30`)).json()) as Job;
    expect(done).toMatchObject({ status: 'succeeded', completedBy: `${id}:1` });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('POST /attempts starts the hedge without waiting out the delay, and returns 202 with the attempt', async () => {
    const id = await hedgedJobWithPrimaryHeld(stack, 'hedge-now');

    const asked = await stack.request('POST', `/v1/jobs/${id}/attempts`, {
      body: { provider: 'fallback' },
    });
    expect(asked.status).toBe(202);
    expect(await asked.json()).toMatchObject({
      attemptId: `${id}:2`,
      seq: 2,
      provider: 'fallback',
    });
    const job = (await (await stack.request('GET', `/v1/jobs/${id}?wait=30`)).json()) as Job;
    await expectReverseOrderOutcome(stack, job, 'hedge-now');

    const late = await stack.request('POST', `/v1/jobs/${id}/attempts`, { body: {} });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ type: '/problems/job-terminal' });
  });
});

describe('the hedge delay is the primary’s observed p95', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({
      providers: (url) => [
        chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000 }),
        chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000 }),
      ],
      // No ONEJOB_HEDGE_DELAY_MS: the worker's own default (2000 ms) applies while no p95 is known.
      env: { ONEJOB_HEDGE_DELAY_MS: '' },
    });
    await certifyForSetup(stack, [['fallback', 'summarize']]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** The hedge timers the workflow started, as their summaries name them. */
  async function hedgeTimers(workflowId: string): Promise<string[]> {
    const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? [])
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => {
        const summary = e.userMetadata?.summary;
        return summary ? defaultPayloadConverter.fromPayload<string>(summary) : '';
      })
      .filter((summary) => summary.startsWith('hedge delay'));
  }

  test('after 20 recorded successes of the primary, a hedged job waits the p95 of their durations before starting the fallback, not the default', async () => {
    // Twenty real successes of the primary…
    const seeded = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const created = await stack.request('POST', '/v1/jobs', {
          headers: { 'idempotency-key': `p95-seed-${i}` },
          body: { type: 'summarize', input: { text: TEXT }, providers: ['primary'] },
        });
        expect(created.status).toBe(201);
        const { id } = (await created.json()) as Job;
        return (await (await stack.request('GET', `/v1/jobs/${id}?wait=30`)).json()) as Job;
      }),
    );
    expect(seeded.map((j) => j.status)).toEqual(Array(20).fill('succeeded'));
    // …whose durations are made known: 200 ms, 400 ms, … 4000 ms. Their p95 (linear
    // interpolation, as percentile_cont does) is 3800 + 0.05 × 200 = 3810 ms.
    for (const [i, job] of seeded.entries()) {
      await stack.pool.query(
        `UPDATE attempts SET started_at = finished_at - make_interval(secs => $2::double precision / 1000)
          WHERE id = $1 AND state = 'succeeded'`,
        [job.completedBy, (i + 1) * 200],
      );
    }

    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'hold', gate: 'hedge-p95' },
    });
    const job = await run(stack, 'hedge-p95');
    expect(job.status).toBe('succeeded');
    expect(job.completedBy).toBe(`${job.id}:2`);
    expect(await hedgeTimers(job.workflowId)).toEqual(['hedge delay 3810 ms']);
    stack.simulator.openGate('hedge-p95');
  });
});

describe('a hedge that starts while the attempt before it is still being written', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({
      providers: (url) => [
        chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000 }),
        chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000 }),
        chatProvider(url, 'second-fallback', 'sim-backup', { timeoutMs: 10_000 }),
      ],
      hedgeDelayMs: 100,
    });
    await certifyForSetup(stack, [
      ['fallback', 'summarize'],
      ['second-fallback', 'summarize'],
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const PLAN = ['primary', 'fallback', 'second-fallback'];

  /**
   * A job row whose workflow has not started yet, as if the API had stopped between its insert
   * and the start: the next create with its key starts it. Copied from a job made with the same
   * intent, so the fingerprint is the one the API computes.
   */
  async function jobNotStartedYet(key: string): Promise<string> {
    const model = `${key}-model`;
    const made = await postHedgedSummary(stack, model, PLAN);
    expect(made.status).toBe(201);
    // Finished first, so that its calls take nothing from the simulator's fault queue.
    const { id } = (await made.json()) as Job;
    await eventually(
      async () => (await (await stack.request('GET', `/v1/jobs/${id}?wait=10`)).json()) as Job,
      (job) => job.status === 'succeeded',
    );
    const { rows } = await stack.pool.query<{ id: string }>(
      `INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input,
                         provider_plan, mode, workflow_id)
       SELECT owner_id, $2, request_fingerprint, job_type, input, provider_plan, mode, $3
         FROM jobs WHERE owner_id = $1 AND idempotency_key = $4
       RETURNING id`,
      [TEST_OWNER, key, jobWorkflowId(TEST_OWNER, key), model],
    );
    return rows[0]!.id;
  }

  test('gets the next attempt number, not the one the slow attempt before it is taking: all run, one wins, and the workflow ends', async () => {
    // Attempt 1 is written at admission and its call is held, so the hedges follow it. Attempt
    // 2's row is slow to write (a PostgreSQL restart, say): an uncommitted row of the same
    // number holds its insert until this test lets go. Meanwhile the next hedge starts.
    const key = `slow-insert-${Date.now()}`;
    const id = await jobNotStartedYet(key);
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'hold', gate: key },
    });
    const blocker = new pg.Client({ connectionString: stack.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(
        `INSERT INTO attempts (id, job_id, seq, provider, exclusive, read_version)
         VALUES ($1, $2, 2, 'fallback', false, 0)`,
        [attemptId(id, 2), id],
      );
      expect((await postHedgedSummary(stack, key, PLAN)).status).toBe(200);
      // Attempt 3 exists and has run while attempt 2 is still being written.
      const seen = await eventually(
        () => attemptRows(stack.pool, id),
        (rows) => rows.some((row) => row.seq === 3 && row.state !== 'starting'),
      );
      expect(seen.map((row) => row.seq)).toEqual([1, 3]);
      await blocker.query('ROLLBACK');
    } finally {
      await blocker.end();
    }
    const job = await eventually(
      async () =>
        (await (await stack.request('GET', `/v1/jobs/${id}?wait=10`)).json()) as Job & {
          attempts: Array<{ seq: number; provider: string }>;
        },
      (current) => current.status === 'succeeded' && current.attempts.length === 3,
    );
    stack.simulator.openGate(key);
    expect(job.attempts.map((a) => [a.seq, a.provider])).toEqual([
      [1, 'primary'],
      [2, 'fallback'],
      [3, 'second-fallback'],
    ]);
    const closed = await eventually(
      async () => (await stack.temporal.workflow.getHandle(job.workflowId).describe()).status.name,
      (status) => status !== 'RUNNING',
    );
    expect(closed).toBe('COMPLETED');
  });
});
