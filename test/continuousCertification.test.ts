import { contractVersion, findJobType } from '../src/jobTypes';
import { runCli } from './support/cli';
import { createJob, summarizeBody, untilJob, type JobView } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { certifyForSetup, useTestStack } from './support/stack';

/**
 * Continuous certification (issue 60, section 3; docs/providers.md): a certified provider whose
 * answers start breaking the contract loses its fallback and hedge eligibility for that job
 * type within a bounded number of calls, keeps its place as a plan's primary, and regains the
 * rest only by a passing `providers certify`. The breaking is the simulator's drifting model
 * (tools/simulator/drift.ts): from the moment the test chooses, a fixed pattern of 30 % of its
 * answers are refusals, so every run sees the same calls break.
 */
const RULE = { threshold: 0.1, confidence: 0.95, windowCalls: 50, minCalls: 10 };
const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'drifty', 'sim-drifts'),
    chatProvider(url, 'steady', 'sim-steady'),
    chatProvider(url, 'refuser', 'sim-refuses'),
    // A primary whose answer the test holds at a gate (its fault is injected below).
    chatProvider(url, 'held', 'sim-backup'),
  ],
  env: {
    ONEJOB_DECERTIFY_THRESHOLD: String(RULE.threshold),
    ONEJOB_DECERTIFY_CONFIDENCE: String(RULE.confidence),
    ONEJOB_DECERTIFY_WINDOW_CALLS: String(RULE.windowCalls),
    ONEJOB_DECERTIFY_MIN_CALLS: String(RULE.minCalls),
    // A job waiting for a fallback that lost its eligibility asks again this often.
    ONEJOB_DECERTIFIED_RECHECK_MS: '300',
  },
});

const VERSION = contractVersion(findJobType('summarize')!);
/**
 * The bound asserted: with the rule above, six clean answers before the drift and 30 % broken
 * after it, the lower bound passes 10 % at the 11th drifted answer (rejectionRate.ts); 20
 * leaves room for a different count of clean answers and still says "bounded".
 */
const BOUND = 20;
const ended = (j: JobView) => ['succeeded', 'failed', 'cancelled'].includes(j.status);
const run = async (body: unknown): Promise<JobView> =>
  untilJob(stack, (await createJob(stack, body)).id, ended);

const decertifications = async () =>
  (
    await stack.pool.query<{
      provider: string;
      job_type: string;
      contract_version: string;
      calls: number;
      rejected: number;
      rate: number;
      lower_bound: number;
      threshold: number;
      attempt_id: string;
    }>(
      `SELECT provider, job_type, contract_version, calls, rejected, rate, lower_bound, threshold, attempt_id
         FROM provider_decertifications`,
    )
  ).rows;
const changes = async () =>
  (
    await stack.pool.query<{
      provider: string;
      change: string;
      changed_by: string;
      detail: Record<string, unknown>;
    }>(`SELECT provider, change, changed_by, detail FROM provider_eligibility_changes ORDER BY id`)
  ).rows;

/** A job admitted while drifty was still eligible, whose primary's answer is held at a gate. */
let admittedBefore: JobView;

beforeAll(async () => {
  // Well-behaved while it is certified: the drift begins when the test says.
  stack.simulator.configureDrift({ rate: 0, afterMs: 0 });
  await certifyForSetup(stack, [
    ['drifty', 'summarize'],
    ['steady', 'summarize'],
  ]);
});

test('a provider breaking 30 % of its answers from a chosen moment loses fallback and hedge eligibility within a bounded number of calls, and the loss is kept with its evidence', async () => {
  for (let i = 0; i < 6; i++)
    expect(await run(summarizeBody(['drifty', 'steady']))).toMatchObject({ status: 'succeeded' });
  expect(await decertifications()).toEqual([]);

  stack.simulator.inject({
    route: 'chat',
    model: 'sim-backup',
    fault: { kind: 'hold', gate: 'held-primary', then: { kind: 'refuses' } },
  });
  admittedBefore = await createJob(stack, summarizeBody(['held', 'drifty']));
  await eventually(
    () => attemptRows(stack.pool, admittedBefore.id),
    (rows) => rows.some((r) => r.provider === 'held' && r.state === 'running'),
  );

  const { rows } = await stack.pool.query<{ now: Date }>('SELECT now() AS now');
  const driftFrom = rows[0]!.now;
  stack.simulator.configureDrift({ rate: 0.3, afterMs: 0 });
  let jobs = 0;
  while ((await decertifications()).length === 0 && jobs < 2 * BOUND) {
    // Drifty is the primary: each job asks it once, and a broken answer falls back to steady.
    expect(await run(summarizeBody(['drifty', 'steady']))).toMatchObject({ status: 'succeeded' });
    jobs += 1;
  }
  const answered = await stack.pool.query<{ calls: number; rejected: number }>(
    `SELECT count(*)::int AS calls, (count(*) FILTER (WHERE call_outcome = 'rejected'))::int AS rejected
       FROM attempts WHERE provider = 'drifty' AND call_ended_at > $1`,
    [driftFrom],
  );
  const { calls, rejected } = answered.rows[0]!;
  expect(calls).toBeLessThanOrEqual(BOUND);
  expect(rejected / calls).toBeGreaterThanOrEqual(0.25);

  const [lost] = await decertifications();
  expect(lost).toMatchObject({
    provider: 'drifty',
    job_type: 'summarize',
    contract_version: VERSION,
    threshold: RULE.threshold,
  });
  expect(lost!.lower_bound).toBeGreaterThan(RULE.threshold);
  expect(lost!.rate).toBeCloseTo(lost!.rejected / lost!.calls, 10);
  // The call whose end tipped it was one of drifty's rejected ones.
  const tipping = await stack.pool.query<{ provider: string; call_outcome: string }>(
    'SELECT provider, call_outcome FROM attempts WHERE id = $1',
    [lost!.attempt_id],
  );
  expect(tipping.rows).toEqual([{ provider: 'drifty', call_outcome: 'rejected' }]);
  expect(await changes()).toEqual([
    expect.objectContaining({
      provider: 'drifty',
      change: 'lost',
      changed_by: expect.stringMatching(/^rejection-rate check/),
      detail: expect.objectContaining({ calls: lost!.calls, rejected: lost!.rejected }),
    }),
  ]);
  // The record is kept as written.
  await expect(stack.pool.query('DELETE FROM provider_eligibility_changes')).rejects.toThrow(
    /kept as written/,
  );
  // Only a passing certification brings it back.
  await expect(stack.pool.query('DELETE FROM provider_decertifications')).rejects.toThrow(
    /only by a passing certification/,
  );
});

test('after the loss, jobs skip the provider as a fallback and as a hedge with a note, and it keeps its place as a primary', async () => {
  const skipped = expect.objectContaining({
    event: 'provider_skipped',
    provider: 'drifty',
    reason: expect.stringMatching(
      /^lost fallback and hedge eligibility for the summarize contract/,
    ),
  });
  const failover = await run(summarizeBody(['refuser', 'drifty']));
  expect(failover).toMatchObject({ status: 'failed', failure: { code: 'no-certified-provider' } });
  expect(failover.notes).toEqual([skipped]);
  expect((await attemptRows(stack.pool, failover.id)).map((a) => a.provider)).toEqual(['refuser']);

  const hedged = await run({ ...summarizeBody(['steady', 'drifty']), mode: 'hedged' });
  expect(hedged.status).toBe('succeeded');
  expect(hedged.notes).toEqual([skipped]);
  expect((await attemptRows(stack.pool, hedged.id)).map((a) => a.provider)).toEqual(['steady']);

  const primary = await run(summarizeBody(['drifty', 'steady']));
  expect((await attemptRows(stack.pool, primary.id))[0]?.provider).toBe('drifty');
  expect(primary.notes).toEqual([]);

  // A job admitted before the loss meets it when its fallback comes up: passed by, noted; with
  // nothing else left in its plan it fails as one with no certified provider left, never
  // waiting on a re-certification that may not come.
  stack.simulator.openGate('held-primary');
  const failed = await untilJob(stack, admittedBefore.id, ended);
  expect(failed.status).toBe('failed');
  expect((failed.failure as { code?: unknown }).code).toBe('no-certified-provider');
  expect(failed.notes).toEqual([skipped]);
  expect((await attemptRows(stack.pool, admittedBefore.id)).map((a) => a.provider)).toEqual([
    'held',
  ]);
});

test('eligibility comes back only with a passing certification: a failing one leaves it lost', async () => {
  stack.simulator.configureDrift({ rate: 1, afterMs: 0 });
  expect((await stack.certify('drifty', 'summarize', { deadlineMs: 30_000 })).passed).toBe(false);
  expect(await decertifications()).toHaveLength(1);

  stack.simulator.configureDrift({ rate: 0, afterMs: 0 });
  const certify = await runCli(
    stack,
    ['providers', 'certify', '--provider', 'drifty', '--job-type', 'summarize'],
    { ONEJOB_PROVIDERS: stack.serviceEnv.ONEJOB_PROVIDERS },
  );
  expect(certify.code).toBe(0);
  expect(await decertifications()).toEqual([]);
  expect((await changes()).map((c) => [c.provider, c.change])).toEqual([
    ['drifty', 'lost'],
    ['drifty', 'regained'],
  ]);

  // A fallback again.
  const failover = await run(summarizeBody(['refuser', 'drifty']));
  expect(failover.status).toBe('succeeded');
  expect((await attemptRows(stack.pool, failover.id)).map((a) => a.provider)).toEqual([
    'refuser',
    'drifty',
  ]);
});

test('providers status and /metrics show the loss and the regain', async () => {
  const status = await runCli(stack, ['providers', 'status', '--json', '--history'], {
    ONEJOB_PROVIDERS: stack.serviceEnv.ONEJOB_PROVIDERS,
  });
  expect(status.code).toBe(0);
  const shown = JSON.parse(status.stdout) as {
    providers: Array<{ provider: string; lostEligibility: unknown[] }>;
    history: Array<{ provider: string; change: string; jobType: string }>;
  };
  expect(shown.providers).toContainEqual(
    expect.objectContaining({ provider: 'drifty', lostEligibility: [] }),
  );
  expect(shown.history.map((c) => [c.provider, c.jobType, c.change])).toEqual([
    ['drifty', 'summarize', 'lost'],
    ['drifty', 'summarize', 'regained'],
  ]);
  const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  expect(metrics).toContain(
    'onejob_provider_eligibility_changes_total{provider="drifty",change="lost"} 1',
  );
  expect(metrics).toContain(
    'onejob_provider_eligibility_changes_total{provider="drifty",change="regained"} 1',
  );
  expect(metrics).not.toMatch(/onejob_provider_decertified\{provider="drifty"/);
});
