import { findJob } from '../src/db/jobs';
import type { JobCost } from '../src/domain/cost';
import { jobResource } from '../src/service/jobDocument';
import { OTHER_OWNER, OTHER_TOKEN, TEST_TOKEN } from './support/identities';
import { freshKey, readJob, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack } from './support/stack';

/**
 * Hedging within a budget: the hedges of hedged jobs may cost at most a share more than their
 * primaries did over a window, and a hedge expected to cost more than the per-job cap is not
 * started. Once spent, a new hedged job runs exclusive and its notes say why.
 */
const CHEAP = { currency: 'USD', inputPerMillion: 0.15, outputPerMillion: 0.6 };
const DEAR = { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 };

const stack = useTestStack({
  // Its own process: it serves the metrics a pause is counted in.
  workerProcess: true,
  providers: (url) => [
    chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000, price: CHEAP }),
    chatProvider(url, 'other-primary', 'sim-steady', { timeoutMs: 10_000, price: CHEAP }),
    chatProvider(url, 'third-primary', 'sim-steady', { timeoutMs: 10_000, price: CHEAP }),
    chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000, price: DEAR }),
  ],
  hedgeDelayMs: 300,
  certify: [['fallback', 'summarize']],
  env: {
    ONEJOB_HEDGE_BUDGET_SHARE: '0.1',
    // A hedge on `fallback` costs about USD 0.0003 here: over the cap.
    ONEJOB_HEDGE_MAX_EXTRA_PER_JOB: '0.00001',
    ONEJOB_HEDGE_BUDGET_REFRESH_MS: '0',
  },
});

type Noted = JobView & { cost: JobCost };

/** A hedged summary whose primary's answer is held at `gate`; returns once its call runs. */
async function hedgedJobHeldAt(
  gate: string,
  primary: string,
  token = TEST_TOKEN,
): Promise<JobView> {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hold', gate } });
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': freshKey('budget') },
    body: {
      type: 'summarize',
      input: { text: `Held at ${gate}. Then let go.` },
      providers: [primary, 'fallback'],
      mode: 'hedged',
    },
    token,
  });
  expect(response.status).toBe(201);
  const job = (await response.json()) as JobView;
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running',
  );
  return job;
}

async function exclusiveFlags(jobId: string): Promise<boolean[]> {
  const { rows } = await stack.pool.query<{ exclusive: boolean }>(
    'SELECT exclusive FROM attempts WHERE job_id = $1 ORDER BY seq',
    [jobId],
  );
  return rows.map((row) => row.exclusive);
}

const pauseNotes = (job: JobView) => job.notes.filter((note) => note.event === 'hedging_paused');

/** The pause note as operators see it (the `onejob` CLI renders the job for operators). */
async function operatorPauseNote(jobId: string): Promise<Record<string, unknown> | undefined> {
  const job = await findJob(stack.pool, jobId);
  const notes = jobResource(job!, undefined, 'operator').notes as Array<Record<string, unknown>>;
  return notes.find((note) => note.event === 'hedging_paused');
}

/** An owner's view of the note: why, in words, and no figure measured over other owners' jobs. */
function expectOwnerSafe(note: Record<string, unknown> | undefined): void {
  expect(note).toBeDefined();
  const allowed = ['event', 'reason', 'primary', 'hedge'];
  expect(Object.keys(note!).filter((key) => !allowed.includes(key))).toEqual([]);
  expect(String(note!.reason)).not.toMatch(/[0-9]|USD/);
}

test('once hedges have cost more than the budget’s share, the next hedged job runs exclusive, and its notes say why', async () => {
  // Within budget (nothing spent yet): the hedge starts while the primary is held, and wins.
  const first = await hedgedJobHeldAt('budget-first', 'primary');
  await untilJob(stack, first.id, (j) => j.status === 'succeeded');
  expect((await readJob(stack, first.id)).completedBy).toBe(`${first.id}:2`);
  expect(pauseNotes(await readJob(stack, first.id))).toEqual([]);
  // The primary's late answer is recorded too: now the hedge cost far more than 10 % of it.
  stack.simulator.openGate('budget-first');
  await eventually(
    async () => (await readJob(stack, first.id)) as Noted,
    (j) => j.cost.unknownCalls === 0 && j.cost.amounts[0]!.others > 0,
  );

  const second = await hedgedJobHeldAt('budget-second', 'primary');
  // Admitted exclusive: its attempt is exclusive, so no hedge can run beside it.
  expect(await exclusiveFlags(second.id)).toEqual([true]);
  const [owners] = pauseNotes(await readJob(stack, second.id));
  expectOwnerSafe(owners);
  expect(String(owners?.reason)).toMatch(/paused by the service's hedging budget/);
  const note = (await operatorPauseNote(second.id))?.service as Record<string, unknown>;
  expect(note).toMatchObject({ currency: 'USD', share: 0.1 });
  expect(String(note?.reason)).toMatch(
    /^hedges of jobs with primary primary cost USD .* more than 10 % of/,
  );
  expect(note.extraCost as number).toBeGreaterThan(0.1 * (note.primaryCost as number));
  // Counted where alerts look: the worker's metrics.
  const metrics = await (
    await fetch(`http://${stack.serviceEnv.ONEJOB_WORKER_HEALTH_ADDRESS}/metrics`)
  ).text();
  expect(metrics).toMatch(/^onejob_hedging_paused_total\{primary="primary"\} [1-9]/m);
  stack.simulator.openGate('budget-second');
  const done = await untilJob(stack, second.id, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(`${second.id}:1`);
  expect(done.attempts.map((a) => a.provider)).toEqual(['primary']);
});

test('a hedge expected to cost more than the per-job cap is not started: the job runs exclusive, and its notes say why', async () => {
  // Hedges on `fallback` cost more than the cap: one is recorded here, unless the test before
  // recorded one already (then this job is itself held back by the cap, which is as good).
  const setUp = await hedgedJobHeldAt('budget-cap-first', 'other-primary');
  await eventually(
    () => readJob(stack, setUp.id),
    (j) => j.attempts.length === 2 || pauseNotes(j).length > 0,
  );
  stack.simulator.openGate('budget-cap-first');
  await eventually(
    async () => (await readJob(stack, setUp.id)) as Noted,
    (j) => j.status === 'succeeded' && j.cost.unknownCalls === 0,
  );
  // Another primary, with no spend of its own: only the cap can stop its hedge on `fallback`.
  const job = await hedgedJobHeldAt('budget-cap', 'third-primary');
  expect(await exclusiveFlags(job.id)).toEqual([true]);
  const [owners] = pauseNotes(await readJob(stack, job.id));
  expectOwnerSafe(owners);
  expect(owners).toMatchObject({ primary: 'third-primary', hedge: 'fallback' });
  const note = await operatorPauseNote(job.id);
  expect(note?.service).toMatchObject({ currency: 'USD' });
  expect(String((note?.service as { reason?: string }).reason)).toMatch(
    /^a hedge on fallback cost USD .* more than the cap of USD 0\.00001/,
  );
  stack.simulator.openGate('budget-cap');
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.attempts.map((a) => a.provider)).toEqual(['third-primary']);
});

test('one owner’s spent hedging budget leaves another owner’s hedging on: each owner spends its own', async () => {
  // The test owner's budget for `primary` is spent: by its own hedge here, unless a test before
  // spent it already (then this job is itself paused, which is as good).
  const spender = await hedgedJobHeldAt('owners-spender', 'primary');
  await eventually(
    () => readJob(stack, spender.id),
    (j) => j.attempts.length === 2 || pauseNotes(j).length > 0,
  );
  stack.simulator.openGate('owners-spender');
  await eventually(
    async () => (await readJob(stack, spender.id)) as Noted,
    (j) => j.status === 'succeeded' && j.cost.unknownCalls === 0,
  );
  const paused = await hedgedJobHeldAt('owners-paused', 'primary');
  expect(await exclusiveFlags(paused.id)).toEqual([true]);
  stack.simulator.openGate('owners-paused');

  // Another owner, same providers: its hedge starts beside its held primary, with no note.
  const other = await hedgedJobHeldAt('owners-other', 'primary', OTHER_TOKEN);
  const readOther = async () =>
    (await (
      await stack.request('GET', `/v1/jobs/${other.id}`, { token: OTHER_TOKEN })
    ).json()) as JobView;
  const hedged = await eventually(readOther, (j) => j.attempts.length === 2);
  expect(hedged.attempts.map((a) => a.provider)).toEqual(['primary', 'fallback']);
  expect(await exclusiveFlags(other.id)).toEqual([false, false]);
  expect(pauseNotes(hedged)).toEqual([]);
  const { rows } = await stack.pool.query<{ owner_id: string }>(
    'SELECT owner_id FROM jobs WHERE id = $1',
    [other.id],
  );
  expect(rows[0]!.owner_id).toBe(OTHER_OWNER);
  stack.simulator.openGate('owners-other');
  await eventually(readOther, (j) => j.status === 'succeeded');
  // The paused job's figures, for operators, are its owner's own.
  expect((await operatorPauseNote(paused.id))?.service).toMatchObject({
    owner: 'owner-a@example.com',
  });
});
