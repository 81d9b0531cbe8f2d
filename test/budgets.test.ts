import fc from 'fast-check';
import { runCli } from './support/cli';
import {
  OTHER_OWNER,
  OTHER_TOKEN,
  SPARE_OWNER,
  SPARE_TOKEN,
  TEST_OWNER,
  TEST_TOKEN,
} from './support/identities';
import { createJob, ended, freshKey, operator, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * Budgets that hold (migration 0026): each attempt of a budgeted owner reserves its worst case in
 * the statement that creates it, so concurrent jobs cannot spend past the budget; an attempt of
 * unknown outcome keeps its reservation until it settles, and what it turns out to cost lands
 * against it. No worst case, no call.
 */
const CHEAP = { currency: 'USD', inputPerMillion: 150, outputPerMillion: 600 };
const DEAR = { currency: 'USD', inputPerMillion: 2_500, outputPerMillion: 10_000 };

const stack = useTestStack({
  providers: (url) => [
    // Counted by the simulator's own count endpoint: the worst case is what the call can bill.
    chatProvider(url, 'metered', 'sim-steady', { price: CHEAP, tokenCount: 'input_tokens' }),
    chatProvider(url, 'metered-dear', 'sim-backup', { price: DEAR, tokenCount: 'input_tokens' }),
    // Its answers may bill after the attempt timed out: such an attempt is unknown.
    chatProvider(url, 'metered-slow', 'sim-steady', {
      price: CHEAP,
      tokenCount: 'input_tokens',
      sideEffects: true,
      timeoutMs: TIMES_OUT_SOON_MS,
    }),
    chatProvider(url, 'unpriced', 'sim-steady'),
    payProvider(url, 'pay-capped', { maxCostPerCall: { currency: 'USD', amount: 0.3 } }),
    // Its breaker is opened by hand: a budgeted owner's attempt is its half-open probe.
    payProvider(url, 'pay-probed', {
      maxCostPerCall: { currency: 'USD', amount: 0.3 },
      breaker: {},
    }),
  ],
  hedgeDelayMs: 200,
  certify: [
    ['metered-dear', 'summarize'],
    ['metered', 'summarize'],
  ],
});

/** Each test budgets its own job type of SPARE_OWNER's, or its own owner: none sees another's. */
async function setBudget(jobType: string, amount: number, owner = SPARE_OWNER): Promise<void> {
  const response = await operator(
    stack,
    'PUT',
    `/budgets/${encodeURIComponent(owner)}?period=day&jobType=${jobType}`,
    { currency: 'USD', amount, reason: `test budget for ${jobType}` },
  );
  expect(response.status).toBe(200);
}

async function removeBudget(jobType: string, owner = SPARE_OWNER): Promise<void> {
  const path = `/budgets/${encodeURIComponent(owner)}?period=day&jobType=${jobType}`;
  const response = await stack.request('DELETE', `/v1/operator${path}`, {
    body: { reason: 'test over' },
    token: 'token-operator-0001',
  });
  expect(response.status).toBe(200);
}

interface PeriodRow {
  reserved: number;
  spent: number;
  amount: number;
  holding: number;
}

/** The budget's current period, read from the database. */
async function period(jobType: string, owner = SPARE_OWNER): Promise<PeriodRow> {
  const { rows } = await stack.pool.query<PeriodRow>(
    `SELECT coalesce(p.reserved, 0)::float8 AS reserved, coalesce(p.spent, 0)::float8 AS spent,
            b.amount::float8 AS amount,
            (SELECT count(*)::int FROM budget_reservations r
              WHERE r.budget_id = b.id AND r.settled_cost IS NULL) AS holding
       FROM budgets b LEFT JOIN budget_periods p ON p.budget_id = b.id
      WHERE b.owner_id = $1 AND b.job_type = $2`,
    [owner, jobType],
  );
  return rows[0]!;
}

/** What the ledger says the owner's calls of this job type cost, and their largest worst case. */
async function ledger(jobType: string, owner = SPARE_OWNER) {
  const { rows } = await stack.pool.query<{ cost: number; worst: number; unpriced: number }>(
    `SELECT coalesce(sum(coalesce(a.cost, a.worst_case)), 0)::float8 AS cost,
            coalesce(max(a.worst_case), 0)::float8 AS worst,
            count(*) FILTER (WHERE a.worst_case IS NULL)::int AS unpriced
       FROM attempts a JOIN jobs j ON j.id = a.job_id
      WHERE j.owner_id = $1 AND j.job_type = $2`,
    [owner, jobType],
  );
  return rows[0]!;
}

/** The summarize job type under another name is not possible: budgets scope by type, so the
 * property runs on `summarize` alone, and the other tests on `chat` and `charge`. */
function summary(providers: string[], mode: 'exclusive' | 'hedged', text: string) {
  return { type: 'summarize', input: { text }, providers, mode };
}

async function create(body: unknown, token = SPARE_TOKEN, key = freshKey('budget')) {
  return stack.request('POST', '/v1/jobs', { headers: { 'idempotency-key': key }, body, token });
}

/** A job as its owner reads it (SPARE_OWNER's unless told). */
async function read(id: string, token = SPARE_TOKEN): Promise<JobView> {
  return (await (await stack.request('GET', `/v1/jobs/${id}`, { token })).json()) as JobView;
}

function until(id: string, done: (job: JobView) => boolean, token = SPARE_TOKEN) {
  return eventually(() => read(id, token), done, 30_000);
}

/** Every request that reached the simulator for the job's attempts. */
const requestsOf = (jobId: string) =>
  stack.simulator.requests().filter((r) => r.idempotencyKey.startsWith(`${jobId}:`));

const CHAT = { type: 'chat', input: { prompt: 'Hi.' }, providers: ['metered'] };

const failureCode = (job: JobView): unknown => (job.failure as { code?: unknown } | null)?.code;

test('concurrent jobs of one owner never reserve or spend beyond the budget plus one worst case, and every reservation settles to the ledger', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 4, max: 9 }),
      fc.double({ min: 1.2, max: 4.8, noNaN: true }),
      fc.constantFrom<'exclusive' | 'hedged'>('exclusive', 'hedged'),
      async (jobs, worstCases, mode) => {
        const text = `Budgets hold under concurrency. Run ${freshKey('text')}.`;
        // One worst case, measured: the first attempt of a job like the others.
        await setBudget('summarize', 1_000_000);
        const probe = (await (
          await create(summary(['metered'], 'exclusive', text))
        ).json()) as JobView;
        await until(probe.id, ended);
        const worst = (await ledger('summarize')).worst;
        expect(worst).toBeGreaterThan(0);
        await removeBudget('summarize');

        const gate = freshKey('gate');
        stack.simulator.inject({
          route: 'chat',
          model: 'sim-steady',
          fault: { kind: 'hold', gate },
        });
        await setBudget('summarize', worst * worstCases);
        const providers = mode === 'hedged' ? ['metered', 'metered-dear'] : ['metered'];
        const responses = await Promise.all(
          Array.from({ length: jobs }, () => create(summary(providers, mode, text))),
        );
        const created = await Promise.all(
          responses.filter((r) => r.status === 201).map(async (r) => (await r.json()) as JobView),
        );
        for (const refused of responses.filter((r) => r.status !== 201)) {
          expect(refused.status).toBe(402);
          expect(refused.headers.get('x-should-retry')).toBe('false');
        }
        // While calls are held, what is reserved never passes the budget.
        const held = await eventually(
          async () => Promise.all(created.map((job) => read(job.id))),
          (views) => views.every((job) => ended(job) || job.attempts.length > 0),
        );
        const during = await period('summarize');
        expect(during.reserved + during.spent).toBeLessThanOrEqual(during.amount + 1e-9);
        stack.simulator.openGate(gate);
        stack.simulator.clearFaults();
        const done = await Promise.all(held.map((job) => until(job.id, ended)));
        for (const job of done.filter((j) => j.status === 'failed'))
          expect(failureCode(job)).toBe('budget-exceeded');
        const after = await eventually(
          () => period('summarize'),
          (row) => row.holding === 0,
        );
        // Settled: nothing reserved, and what is spent is the ledger's, within one worst case.
        expect(after.reserved).toBe(0);
        expect(after.spent).toBeLessThanOrEqual(after.amount + worst + 1e-9);
        const { rows } = await stack.pool.query<{ spent: number }>(
          `SELECT coalesce(sum(coalesce(a.cost, a.worst_case)), 0)::float8 AS spent
             FROM budget_reservations r JOIN attempts a ON a.id = r.attempt_id
             JOIN budgets b ON b.id = r.budget_id
            WHERE b.owner_id = $1 AND b.job_type = 'summarize'`,
          [SPARE_OWNER],
        );
        expect(after.spent).toBeCloseTo(rows[0]!.spent, 9);
        await removeBudget('summarize');
      },
    ),
    { numRuns: 3 },
  );
});

test('an unknown attempt keeps its reservation until it settles, and its late cost lands against it', async () => {
  const gate = freshKey('late');
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hold', gate } });
  await setBudget('chat', 1_000);
  const response = await create({
    type: 'chat',
    input: { prompt: 'A call that answers after its attempt gave up.' },
    providers: ['metered-slow'],
  });
  expect(response.status).toBe(201);
  const job = (await response.json()) as JobView;
  const unknown = await until(job.id, (j) => j.attempts[0]?.state === 'unknown');
  expect(unknown.status).not.toBe('failed');
  const holding = await period('chat');
  expect(holding.holding).toBe(1);
  expect(holding.reserved).toBeGreaterThan(0);
  expect(holding.spent).toBe(0);
  // The late answer: its usage is the call's cost, which replaces the reservation.
  stack.simulator.openGate(gate);
  const settled = await eventually(
    () => period('chat'),
    (row) => row.holding === 0,
    30_000,
  );
  const [attempt] = (
    await stack.pool.query<{ cost: number; worst: number }>(
      'SELECT cost::float8 AS cost, worst_case::float8 AS worst FROM attempts WHERE job_id = $1',
      [job.id],
    )
  ).rows;
  expect(attempt!.cost).toBeGreaterThan(0);
  expect(attempt!.cost).toBeLessThanOrEqual(attempt!.worst);
  expect(settled.reserved).toBe(0);
  expect(settled.spent).toBeCloseTo(attempt!.cost, 12);
  await removeBudget('chat');
});

test('a new job is refused at create (402 budget-exceeded, x-should-retry false) once the budget is spent, while a replay of a stored key still answers its job', async () => {
  const key = freshKey('before-budget');
  const before = await create(CHAT, SPARE_TOKEN, key);
  expect(before.status).toBe(201);
  const stored = (await before.json()) as JobView;
  await setBudget('chat', 0);
  // Each API process reads an owner's budgets at most once a second for this check: a create
  // within that second makes a job, which fails at its first attempt; each try has its own key.
  let refusedKey = '';
  const refused = await eventually(
    () => create(CHAT, SPARE_TOKEN, (refusedKey = freshKey('over-budget'))),
    (r) => r.status !== 201,
  );
  expect(refused.status).toBe(402);
  expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(refused.headers.get('x-should-retry')).toBe('false');
  const problem = (await refused.json()) as { type: string; budget: Record<string, unknown> };
  expect(problem.type).toMatch(/budget-exceeded$/);
  expect(problem.budget).toMatchObject({ period: 'day', currency: 'USD', amount: 0 });
  const { rows } = await stack.pool.query('SELECT 1 FROM jobs WHERE idempotency_key = $1', [
    refusedKey,
  ]);
  expect(rows).toEqual([]);
  // The replay of the key used before the budget answers as always.
  const replay = await create(CHAT, SPARE_TOKEN, key);
  expect(replay.status).toBe(200);
  expect(((await replay.json()) as JobView).id).toBe(stored.id);
  await removeBudget('chat');
});

test('no worst case, no call: a budgeted owner’s job on a provider without a price or a maximum fee fails with budget-exceeded, and nothing is sent', async () => {
  await setBudget('summarize', 1_000, TEST_OWNER);
  const job = await createJob(
    stack,
    summary(['unpriced'], 'exclusive', 'No price, no call.'),
    freshKey('unpriced'),
  );
  const failed = await until(job.id, ended, TEST_TOKEN);
  expect(failed.status).toBe('failed');
  expect(failureCode(failed)).toBe('budget-exceeded');
  expect(failed.attempts).toEqual([]);
  expect(failed.notes.some((note) => note.event === 'budget_exceeded')).toBe(true);
  expect(requestsOf(job.id)).toEqual([]);
  await removeBudget('summarize', TEST_OWNER);
});

test('a hedge that does not fit the budget is passed by with a note, and the primary goes on to win', async () => {
  await setBudget('summarize', 1_000_000, TEST_OWNER);
  const probe = await createJob(
    stack,
    summary(['metered'], 'exclusive', 'A hedge too dear for the budget.'),
    freshKey('probe'),
  );
  await until(probe.id, ended, TEST_TOKEN);
  const worst = (await ledger('summarize', TEST_OWNER)).worst;
  await removeBudget('summarize', TEST_OWNER);
  // Room for the cheap primary's worst case, not for the dear hedge's beside it.
  await setBudget('summarize', worst * 2, TEST_OWNER);
  const gate = freshKey('hedge');
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hold', gate } });
  const job = await createJob(
    stack,
    summary(['metered', 'metered-dear'], 'hedged', 'A hedge too dear for the budget.'),
    freshKey('hedged'),
  );
  await until(job.id, (j) => j.notes.some((note) => note.event === 'budget_exceeded'), TEST_TOKEN);
  stack.simulator.openGate(gate);
  const done = await until(job.id, ended, TEST_TOKEN);
  expect(done.status).toBe('succeeded');
  expect(done.attempts.map((a) => a.provider)).toEqual(['metered']);
  await removeBudget('summarize', TEST_OWNER);
});

test('an owner reads its own budgets, operators set and remove anyone’s, and every change is audited with who and why', async () => {
  await setBudget('charge', 0.6);
  const own = await stack.request('GET', '/v1/budgets', { token: SPARE_TOKEN });
  expect(own.status).toBe(200);
  const { budgets } = (await own.json()) as { budgets: Array<Record<string, unknown>> };
  expect(budgets).toContainEqual(
    expect.objectContaining({
      jobType: 'charge',
      period: 'day',
      currency: 'USD',
      amount: 0.6,
      left: 0.6,
    }),
  );
  const others = (await (await stack.request('GET', '/v1/budgets')).json()) as {
    budgets: unknown[];
  };
  expect(JSON.stringify(others.budgets)).not.toContain('"charge"');
  // A payment API's worst case is its maximum fee: two charges of 0.3 fit, a third does not.
  const charges = await Promise.all(
    [1, 2, 3].map(() =>
      create({
        type: 'charge',
        input: { amountCents: 100, currency: 'EUR', account: freshKey('acct') },
        providers: ['pay-capped'],
      }),
    ),
  );
  // The third is refused: at its first attempt, or at create once the two have spent it all.
  const views = await Promise.all(
    charges
      .filter((r) => r.status === 201)
      .map(async (r) => until(((await r.json()) as JobView).id, ended)),
  );
  expect(views.filter((v) => v.status === 'succeeded')).toHaveLength(2);
  expect(
    views.filter((v) => failureCode(v) === 'budget-exceeded').length +
      charges.filter((r) => r.status === 402).length,
  ).toBe(1);
  const euro = await operator(stack, 'PUT', `/budgets/${SPARE_OWNER}?period=day&jobType=charge`, {
    currency: 'EUR',
    amount: 5,
    reason: 'another currency',
  });
  expect(euro.status).toBe(409);
  await removeBudget('charge');
  const changes = (await (
    await operator(stack, 'GET', `/budgets/${SPARE_OWNER}/changes`, undefined)
  ).json()) as { changes: Array<Record<string, unknown>> };
  expect(changes.changes[0]).toMatchObject({
    jobType: 'charge',
    before: { currency: 'USD', amount: 0.6 },
    after: null,
    changedBy: 'ops-alice',
    reason: 'test over',
  });
});

test('a 429 storm on a cheap primary never fails over to a backup dearer than the price ceiling’s multiple: it is skipped with a note saying what was avoided', async () => {
  const set = await runCli(stack, [
    'ceilings',
    'set',
    '--owner',
    SPARE_OWNER,
    '--job-type',
    'summarize',
    '--max-multiple',
    '5',
    '--reason',
    'no backup above 5x',
  ]);
  expect(set).toMatchObject({ code: 0 });
  const refused = await runCli(stack, [
    'ceilings',
    'set',
    '--max-multiple',
    '0.5',
    '--reason',
    'x',
  ]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr.trim().split('\n')).toHaveLength(1);
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 429 },
  });
  const job = (await (
    await create(summary(['metered', 'metered-dear'], 'exclusive', 'A storm on the cheap one.'))
  ).json()) as JobView;
  const done = await until(job.id, ended);
  expect(done.status).toBe('failed');
  expect(done.attempts.map((a) => a.provider)).toEqual(['metered']);
  const skipped = done.notes.find(
    (note) => note.event === 'provider_skipped' && note.provider === 'metered-dear',
  ) as { reason: string; avoided: { multiple: number; ceiling: number } } | undefined;
  expect(skipped?.reason).toMatch(/above the price ceiling of 5×/);
  expect(skipped?.avoided.multiple).toBeGreaterThan(5);
  expect(requestsOf(job.id).filter((r) => r.model === 'sim-backup')).toEqual([]);
  stack.simulator.clearFaults();
  expect(
    await runCli(stack, ['ceilings', 'remove', '--owner', SPARE_OWNER, '--job-type', 'summarize']),
  ).toMatchObject({ code: 0 });
});

test('a job never reserves past its own cost ceiling: an attempt whose worst case does not fit fails the job with the reason, nothing sent', async () => {
  const set = await runCli(stack, [
    'ceilings',
    'set',
    '--owner',
    SPARE_OWNER,
    '--job-type',
    'chat',
    '--max-job-cost',
    '0.000001',
    '--currency',
    'USD',
    '--reason',
    'tiny jobs only',
  ]);
  expect(set).toMatchObject({ code: 0 });
  const job = (await (await create(CHAT)).json()) as JobView;
  const done = await until(job.id, ended);
  expect(done.status).toBe('failed');
  expect(failureCode(done)).toBe('budget-exceeded');
  expect(String((done.failure as { message?: unknown }).message)).toMatch(
    /the job may cost at most USD/,
  );
  expect(requestsOf(job.id)).toEqual([]);
  await runCli(stack, ['ceilings', 'remove', '--owner', SPARE_OWNER, '--job-type', 'chat']);
});

/** pay-probed's breaker, open since long before its cool-off: the next attempt is its probe. */
async function openProbedBreaker(): Promise<void> {
  await stack.pool.query(
    `INSERT INTO provider_health (provider, breaker, opened_at, reason)
     VALUES ('pay-probed', 'open', now() - interval '1 hour', 'opened by the test')
     ON CONFLICT (provider) DO UPDATE
       SET breaker = 'open', opened_at = EXCLUDED.opened_at, reason = EXCLUDED.reason,
           probe_attempt_id = NULL, probe_started_at = NULL, cooldown_until = NULL`,
  );
}

async function probedBreaker() {
  const { rows } = await stack.pool.query<{
    breaker: string;
    probe_attempt_id: string | null;
    probe_exists: boolean;
  }>(
    `SELECT h.breaker, h.probe_attempt_id,
            EXISTS (SELECT 1 FROM attempts a WHERE a.id = h.probe_attempt_id) AS probe_exists
       FROM provider_health h WHERE h.provider = 'pay-probed'`,
  );
  return rows[0]!;
}

const PROBED_CHARGE = {
  type: 'charge',
  input: { amountCents: 100, currency: 'EUR', account: 'acct-probed' },
  providers: ['pay-probed'],
};

test("a budgeted owner's attempt that is its provider's half-open probe is made once its worst case is known: the probe claim is its own, and the job succeeds", async () => {
  await setBudget('charge', 1_000, TEST_OWNER);
  await openProbedBreaker();
  const job = await createJob(stack, PROBED_CHARGE, freshKey('probe-budgeted'));
  const done = await until(job.id, ended, TEST_TOKEN);
  expect(done.status).toBe('succeeded');
  expect(done.attempts.map((a) => a.provider)).toEqual(['pay-probed']);
  // The probe's end closes the breaker once its call is settled, beside the job's ending.
  await eventually(probedBreaker, (health) => health.breaker === 'closed');
  await removeBudget('charge', TEST_OWNER);
});

test('a probe the budget refuses gives its claim back: the breaker is left open for the next job, never half-open for an attempt that does not exist', async () => {
  // Room at create (nothing spent), none for the attempt's worst case of USD 0.3.
  await setBudget('charge', 0.1, OTHER_OWNER);
  await openProbedBreaker();
  const created = await create(PROBED_CHARGE, OTHER_TOKEN, freshKey('probe-refused'));
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as JobView;
  const failed = await until(id, ended, OTHER_TOKEN);
  expect(failed.status).toBe('failed');
  expect(failureCode(failed)).toBe('budget-exceeded');
  expect(await probedBreaker()).toMatchObject({ breaker: 'open', probe_attempt_id: null });
  await removeBudget('charge', OTHER_OWNER);
  // The next job, of an owner with room, is the probe, and closes the breaker.
  const next = await createJob(stack, PROBED_CHARGE, freshKey('probe-next'));
  expect((await until(next.id, ended, TEST_TOKEN)).status).toBe('succeeded');
  await eventually(probedBreaker, (health) => health.breaker === 'closed');
});
