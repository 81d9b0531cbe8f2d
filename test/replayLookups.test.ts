import { beginReplay } from '../src/db/attemptReplays';
import type { ProviderConfig } from '../src/providers/provider';
import type { Fault } from '../tools/simulator/faults';
import { DEFAULT_CHARGE_SETTINGS } from '../tools/simulator/ledger';
import {
  chargeBody,
  createJob,
  ended,
  endedOrNeedsOperator,
  operator,
  readJob,
  untilJob,
} from './support/jobs';
import { eventually } from './support/polling';
import { providerSaw, requestsFor } from './support/providerLedger';
import { payProvider, TIMES_OUT_SOON_MS } from './support/providers';
import { useTestStack } from './support/stack';

/**
 * A lost answer settled as real payment APIs allow: the first request sent again, byte for
 * byte, under the same key, inside the provider's key window (Stripe keeps a key's answer at
 * least 24 h; PayPal answers a repeated request id with the first request's status). PostgreSQL
 * refuses to begin a replay at or after the window less its margin, so a look never turns into
 * a second charge; a search that lags its writes is not believed early.
 */

/** A short key window for the test that lets it close: replays may begin for 2 s. */
const SHORT_WINDOW = { keyWindow: 3_000, margin: 1_000 };

const providers = (url: string): ProviderConfig[] => [
  // No status lookup: the replay is the only way to learn what became of a lost answer.
  payProvider(url, 'pay-replay', {
    statusUrl: undefined,
    timeoutMs: TIMES_OUT_SOON_MS,
    replay: { keyWindow: '24h', margin: '1h' },
  }),
  payProvider(url, 'pay-replay-short', {
    statusUrl: undefined,
    timeoutMs: TIMES_OUT_SOON_MS,
    replay: SHORT_WINDOW,
  }),
  // A search whose index is 4 s behind the provider's writes, configured as such.
  payProvider(url, 'pay-search', {
    statusUrl: undefined,
    searchUrl: `${url}/v1/charges/search?query=idempotency_key:'{key}'`,
    consistency: { lagMs: 4_000 },
    lateResultTimeoutMs: 1_500,
    notFoundGraceMs: 200,
  }),
  payProvider(url, 'pay-backup'),
];

const stack = useTestStack({ providers, certify: [['pay-backup', 'charge']] });
afterEach(() => stack.simulator.configureCharges(DEFAULT_CHARGE_SETTINGS));

/** The replays sent for an attempt, as PostgreSQL recorded them. */
async function replaysOf(attemptId: string) {
  const { rows } = await stack.pool.query<{
    verdict: string | null;
    http_status: number | null;
    detail: Record<string, unknown> | null;
    before_window_end: boolean;
  }>(
    `SELECT r.verdict, r.http_status, r.detail, r.began_at < s.replay_until AS before_window_end
       FROM attempt_replays r JOIN attempt_sends s USING (attempt_id)
      WHERE r.attempt_id = $1 ORDER BY r.id`,
    [attemptId],
  );
  return rows;
}

/** A charge on `plan` whose first request does the work and loses its answer; its job once ended. */
async function lostAnswerCharge(plan: string[]) {
  const body = chargeBody(plan);
  stack.simulator.inject({
    route: 'charge',
    account: body.input.account,
    fault: { kind: 'drop_after' },
  });
  const job = await createJob(stack, body);
  return { job, done: await untilJob(stack, job.id, ended) };
}

test('a charge whose answer is lost is settled by a replay under its key: no operator, one charge at the provider', async () => {
  const { job, done } = await lostAnswerCharge(['pay-replay', 'pay-backup']);

  expect(done.status).toBe('succeeded');
  expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([['pay-replay', 'succeeded']]);
  expect(done.result).toMatchObject({ status: 'succeeded', idempotencyKey: `${job.id}:1` });
  // Two requests under one key, one charge: the second was answered from the provider's store.
  expect(providerSaw(stack, job.id)).toEqual({
    requests: [`${job.id}:1`, `${job.id}:1`],
    effects: [`${job.id}:1`],
  });
  const replays = await replaysOf(`${job.id}:1`);
  expect(replays).toEqual([
    expect.objectContaining({ verdict: 'answered', http_status: 201, detail: { replayed: true } }),
  ]);
  // The bytes sent were the first request's, and are not kept once the attempt is settled.
  const [first, again] = requestsFor(stack, job.id);
  expect(again?.bodyDigest).toMatch(/^[0-9a-f]{64}$/);
  expect(again?.bodyDigest).toBe(first?.bodyDigest);
  const { rows } = await stack.pool.query('SELECT body FROM attempt_sends WHERE attempt_id = $1', [
    `${job.id}:1`,
  ]);
  expect(rows).toEqual([{ body: null }]);
});

test('a replay while the first request is still being processed is refused by the provider, looked at again, and settles once the first is done', async () => {
  const body = chargeBody(['pay-replay']);
  const gate = `processing-${body.input.account}`;
  // The first request is processed slowly; when done, its answer is lost on the way back.
  stack.simulator.inject({
    route: 'charge',
    account: body.input.account,
    fault: { kind: 'hold', gate, then: { kind: 'drop_after' } },
  });
  const job = await createJob(stack, body);
  await eventually(
    () => replaysOf(`${job.id}:1`),
    (replays) => replays.some((r) => r.verdict === 'in_progress'),
  );
  expect((await readJob(stack, job.id)).status).toBe('unknown');
  stack.simulator.openGate(gate);

  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.attempts).toHaveLength(1);
  expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:1`]);
  const replays = await replaysOf(`${job.id}:1`);
  expect(replays.at(-1)).toMatchObject({ verdict: 'answered', http_status: 201 });
  expect(replays.every((r) => r.http_status === 409 || r === replays.at(-1))).toBe(true);
});

test('after the key window nothing is sent again: the look says so and calls an operator, and PostgreSQL refuses a replay even to code that tries one', async () => {
  // The provider forgets keys as the window ends: a request sent after it would charge again.
  stack.simulator.configureCharges({ keyWindowMs: 3_000 });
  const body = chargeBody(['pay-replay-short', 'pay-backup']);
  const gate = `never-${body.input.account}`;
  // The first request stays in processing for as long as the test wants: every replay is 409.
  stack.simulator.inject({
    route: 'charge',
    account: body.input.account,
    fault: { kind: 'hold', gate, then: { kind: 'drop_after' } },
  });
  const job = await createJob(stack, body);
  const attemptId = `${job.id}:1`;
  const { job: seen, workflow } = await endedOrNeedsOperator(stack, job);

  expect(seen.status).toBe('unknown');
  expect(workflow.needsOperator).toBe(true);
  expect(workflow.waitingOn).toMatch(/key window is over for a replay/);
  // The attempt itself says so, for GET and the CLI.
  expect(seen.attempts[0]?.error).toMatchObject({
    code: 'needs_operator',
    evidence: 'replay-window-over',
  });
  // Every replay began inside the window, and each was one request at the provider.
  const replays = await replaysOf(attemptId);
  expect(replays.length).toBeGreaterThan(0);
  expect(replays.every((r) => r.before_window_end)).toBe(true);
  const sent = requestsFor(stack, job.id).filter((r) => r.idempotencyKey === attemptId);
  expect(sent).toHaveLength(1 + replays.length);

  // A bug that skipped the look's own reading of the window still cannot begin one.
  await expect(beginReplay(stack.pool, attemptId, 20_000)).rejects.toMatchObject({
    code: '23514',
    constraint: 'attempt_replays_inside_key_window',
  });
  await expect(
    stack.pool.query(
      'INSERT INTO attempt_replays (attempt_id, land_window_ms, lands_by) VALUES ($1, 1, now())',
      [attemptId],
    ),
  ).rejects.toThrow(/attempt_replays_inside_key_window/);
  // Nor fail, by machine, an attempt whose replay may have done the work unseen.
  await expect(
    stack.pool.query(
      `UPDATE attempts SET replay_effect_unknown = true, state = 'failed', finished_at = now(),
              error = '{"code":"never_processed"}' WHERE id = $1`,
      [attemptId],
    ),
  ).rejects.toThrow(/attempts_replay_in_doubt_is_not_failed_by_machine/);
  // Nor can it move the window.
  await expect(
    stack.pool.query(`UPDATE attempt_sends SET first_sent_at = now() WHERE attempt_id = $1`, [
      attemptId,
    ]),
  ).rejects.toThrow(/attempt_sends_fixed/);
  expect(requestsFor(stack, job.id).filter((r) => r.idempotencyKey === attemptId)).toHaveLength(
    sent.length,
  );
  // The fallback never charged: the unknown attempt blocks it.
  expect(seen.attempts).toHaveLength(1);
  stack.simulator.openGate(gate);
  expect(providerSaw(stack, job.id).effects.length).toBeLessThanOrEqual(1);
});

test('a replay answered "this key was used with other parameters" goes to an operator, with that answer kept', async () => {
  const body = chargeBody(['pay-replay', 'pay-backup']);
  const account = body.input.account;
  stack.simulator.inject({ route: 'charge', account, fault: { kind: 'drop_after' } });
  stack.simulator.inject({ route: 'charge', account, fault: { kind: 'key_reused' } });
  const job = await createJob(stack, body);
  const { job: seen, workflow } = await endedOrNeedsOperator(stack, job);

  expect(seen.status).toBe('unknown');
  expect(workflow.needsOperator).toBe(true);
  expect(workflow.waitingOn).toMatch(/holds this key for other parameters/);
  expect(seen.attempts[0]?.error).toMatchObject({
    code: 'needs_operator',
    evidence: 'replay-key-reused',
    answered: { status: 400, type: 'idempotency_error' },
  });
  expect(await replaysOf(`${job.id}:1`)).toEqual([
    expect.objectContaining({
      verdict: 'key_reused',
      http_status: 400,
      detail: expect.objectContaining({ type: 'idempotency_error' }),
    }),
  ]);
  expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:1`]);
});

test('a replay refused in the provider own words settles the attempt failed, and the fallback charges once', async () => {
  const body = chargeBody(['pay-replay', 'pay-backup']);
  const account = body.input.account;
  // The first request never reached the work; the replay is declined as the first would be.
  stack.simulator.inject({ route: 'charge', account, fault: { kind: 'drop_before' } });
  stack.simulator.inject({
    route: 'charge',
    account,
    fault: { kind: 'fail_before', status: 402, message: 'Your card was declined.' },
  });
  const job = await createJob(stack, body);
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');

  expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([
    ['pay-replay', 'failed'],
    ['pay-backup', 'succeeded'],
  ]);
  expect(done.attempts[0]?.error).toMatchObject({ code: 'replay_refused' });
  expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:2`]);
});

test('a search that lags its writes is not believed early: a charge whose answer was lost is found, never failed and charged again', async () => {
  stack.simulator.configureCharges({ searchLagMs: 4_000 });
  const { job, done } = await lostAnswerCharge(['pay-search', 'pay-backup']);

  expect(done.status).toBe('succeeded');
  expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([['pay-search', 'succeeded']]);
  expect(providerSaw(stack, job.id).effects).toEqual([`${job.id}:1`]);
  expect(requestsFor(stack, job.id, 'charge-search').length).toBeGreaterThan(0);
});

/**
 * A charge whose first request never reaches the work and whose first replay is held on its way
 * (then behaves as `then`), failed by an operator while that replay is out. Returns the job, its
 * attempt 1, and opens the replay's way with `release`.
 */
async function operatorFailsWhileReplayIsOut(then?: Fault) {
  const body = chargeBody(['pay-replay', 'pay-backup']);
  const account = body.input.account;
  const gate = `replay-out-${account}`;
  stack.simulator.inject({ route: 'charge', account, fault: { kind: 'drop_before' } });
  stack.simulator.inject({
    route: 'charge',
    account,
    fault: { kind: 'hold', gate, ...(then ? { then } : {}) },
  });
  const job = await createJob(stack, body);
  const attemptId = `${job.id}:1`;
  await eventually(
    async () => requestsFor(stack, job.id).filter((r) => r.fault === 'hold'),
    (held) => held.length === 1,
  );
  // The operator looked at the provider's console, found nothing yet, and fails the attempt.
  const resolved = await operator(stack, 'POST', `/attempts/${attemptId}/resolve`, {
    outcome: 'failed',
    reason: 'nothing in the provider console',
  });
  expect(resolved.status).toBeLessThan(300);
  return { job, attemptId, release: () => stack.simulator.openGate(gate) };
}

test("an operator's failed, given while a replay may still land, is held: the replay that does the work wins, and the fallback never charges", async () => {
  // The first request never reaches the work; the replay is the first to arrive.
  const { job, attemptId, release } = await operatorFailsWhileReplayIsOut();
  const held = await stack.pool.query<{ state: string; reported: boolean }>(
    'SELECT state, reported_failure IS NOT NULL AS reported FROM attempts WHERE id = $1',
    [attemptId],
  );
  expect(held.rows).toEqual([{ state: 'unknown', reported: true }]);

  release();
  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([['pay-replay', 'succeeded']]);
  expect(providerSaw(stack, job.id).effects).toEqual([attemptId]);
});

test('a held failure report stays held when the replay that did the work loses its answer: the next replay tells, and the charge is recorded once', async () => {
  // The first request never reaches the work; the replay does it, but its answer is lost.
  const { job, attemptId, release } = await operatorFailsWhileReplayIsOut({ kind: 'drop_after' });
  release();

  const done = await untilJob(stack, job.id, ended);
  expect(done.status).toBe('succeeded');
  expect(done.attempts.map((a) => [a.provider, a.state])).toEqual([['pay-replay', 'succeeded']]);
  expect(providerSaw(stack, job.id).effects).toEqual([attemptId]);
  const verdicts = (await replaysOf(attemptId)).map((r) => r.verdict);
  expect(verdicts).toEqual(['no_news', 'answered']);
});
