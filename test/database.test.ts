import pg from 'pg';
import { beginProviderCall } from '../src/db/attemptCalls';
import { claimDueChecks, scheduleNextCheck, wakeDone } from '../src/db/attemptChecks';
import { operatorsFailure, reportAttemptFailure } from '../src/db/attemptFailureReports';
import { createAttempt, findAttempt } from '../src/db/attempts';
import { settleAttemptWithoutResult } from '../src/db/attemptSettlement';
import { recordAttemptResult } from '../src/db/compareAndSwap';
import { finishJobWithoutResult } from '../src/db/endedJobs';
import { listOwnedJobs } from '../src/db/jobLists';
import { addJobNotes, findJob, findJobByKey, insertJobOrFindExisting } from '../src/db/jobs';
import {
  ATTEMPTS_IN_FLIGHT_SQL,
  JOBS_UNKNOWN_SQL,
  OLDEST_UNKNOWN_SQL,
} from '../src/db/metricCounts';
import { migrate, loadMigrations } from '../src/db/migrate';
import { createPool, inTransaction, type Pool } from '../src/db/pool';
import { OBSERVED_P95_SQL } from '../src/db/providerStats';
import { pendingEventKeys } from '../src/db/webhookDeliveries';
import { insertEndpoint } from '../src/db/webhookEndpoints';
import { Refusal } from '../src/domain/failures';
import { requestFingerprint } from '../src/domain/fingerprint';
import { parseSecretKeys } from '../src/domain/secretSealing';
import { jobWorkflowId } from '../src/domain/workflowId';
import { withDatabase } from '../tools/stack/postgres';
import { holdStatement } from './support/barriers';
import { createTestDatabase, inRolledBackTransaction } from './support/database';
import { harness } from './support/harness';
import { TEST_SECRET_KEYS } from './support/identities';
import { waitingOrSettled } from './support/lockWaits';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

let keyCounter = 0;
async function newJob(pool: Pool, owner = 'owner-1') {
  const key = `key-${++keyCounter}`;
  const intent = {
    type: 'summarize',
    input: { text: 'hello there' },
    providers: ['p1', 'p2'],
    mode: 'exclusive' as const,
  };
  const { job } = await insertJobOrFindExisting(pool, {
    ownerId: owner,
    idempotencyKey: key,
    requestFingerprint: requestFingerprint({ ...intent, providers: null }),
    intent,
    workflowId: jobWorkflowId(owner, key),
  });
  return job;
}

/** A new job whose attempt 1, on `provider`, has been sent: `running`. */
async function runningFirstAttempt(pool: Pool, provider = 'p1') {
  const job = await newJob(pool);
  const attempt = await createAttempt(pool, { jobId: job.id, seq: 1, provider, exclusive: true });
  await beginProviderCall(pool, attempt.id);
  return { job, attempt };
}

/** A new job whose attempt 1, on `provider`, was sent and then timed out: `unknown`. */
async function unknownFirstAttempt(pool: Pool, provider: string) {
  const { job, attempt } = await runningFirstAttempt(pool, provider);
  await settleAttemptWithoutResult(pool, attempt.id, 'unknown', { code: 'timeout' });
  return { job, attempt };
}

test('a job read as one document (the replay path) is the job read as columns, field for field, new, running and ended', async () => {
  const fresh = await newJob(db.pool);
  expect(await findJobByKey(db.pool, fresh.ownerId, fresh.idempotencyKey)).toEqual(
    await findJob(db.pool, fresh.id),
  );
  const { job, attempt } = await runningFirstAttempt(db.pool);
  const asDocument = () => findJobByKey(db.pool, job.ownerId, job.idempotencyKey);
  await addJobNotes(db.pool, job.id, [{ event: 'provider_skipped', provider: 'p2', reason: 'x' }]);
  expect(await asDocument()).toMatchObject({ status: 'running', attemptCount: 1 });
  expect(await asDocument()).toEqual(await findJob(db.pool, job.id));
  await recordAttemptResult(db.pool, {
    attemptId: attempt.id,
    result: { summary: 'ünïcode \u2028 and a big 12345678901234567890 number', n: 1.5e300 },
  });
  const ended = await findJob(db.pool, job.id);
  expect(ended).toMatchObject({ status: 'succeeded', completedBy: attempt.id });
  expect(ended!.finishedAt).toBeInstanceOf(Date);
  expect(await asDocument()).toEqual(ended);
  // The insert-or-find answers a replay with the same document.
  const { job: replayed, created } = await insertJobOrFindExisting(db.pool, {
    ownerId: job.ownerId,
    idempotencyKey: job.idempotencyKey,
    requestFingerprint: job.requestFingerprint,
    intent: { type: job.type, input: job.input, providers: job.providers, mode: job.mode },
    workflowId: job.workflowId,
  });
  expect(created).toBe(false);
  expect(replayed).toEqual(ended);
});

test('two processes migrating one fresh database at once apply each migration exactly once', async () => {
  const { adminDatabaseUrl } = harness();
  const name = `onejob_migrate_race_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const pools = [0, 1, 2].map(() => createPool(withDatabase(adminDatabaseUrl, name), { max: 1 }));
  try {
    const results = await Promise.all(pools.map((pool) => migrate(pool)));
    const all = (await loadMigrations()).map((m) => m.name);
    // Exactly one caller applied everything; the others found nothing left to do.
    expect(results.flat().sort()).toEqual(all.sort());
    expect(results.filter((applied) => applied.length > 0)).toHaveLength(1);
    const { rows } = await pools[0]!.query('SELECT count(*)::int AS n FROM onejob_migrations');
    expect(rows[0].n).toBe(all.length);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
});

test('the same (owner, key) inserted concurrently yields one job row', async () => {
  const intent = {
    type: 'summarize',
    input: { text: 'same' },
    providers: ['p1'],
    mode: 'exclusive' as const,
  };
  const request = {
    ownerId: 'owner-race',
    idempotencyKey: 'double-click',
    requestFingerprint: requestFingerprint({ ...intent, providers: null }),
    intent,
    workflowId: jobWorkflowId('owner-race', 'double-click'),
  };
  const results = await Promise.all(
    Array.from({ length: 32 }, () => insertJobOrFindExisting(db.pool, request)),
  );
  expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
  expect(results.filter((r) => r.created)).toHaveLength(1);
});

test('the database refuses a second in-flight exclusive attempt, including behind an unknown one', async () => {
  const { job, attempt: first } = await unknownFirstAttempt(db.pool, 'p1');

  const second = createAttempt(db.pool, { jobId: job.id, seq: 2, provider: 'p2', exclusive: true });
  await expect(second).rejects.toBeInstanceOf(Refusal);
  await expect(second).rejects.toMatchObject({
    failure: 'attemptInFlight',
    details: { attemptId: first.id, state: 'unknown' },
  });

  // Even raw SQL that bypasses our code is refused by the partial unique index.
  await expect(
    inRolledBackTransaction(db.pool, (client) =>
      client.query(
        `INSERT INTO attempts (id, job_id, seq, provider, exclusive, read_version) VALUES ($1, $2, 2, 'p2', true, 0)`,
        [`${job.id}:2`, job.id],
      ),
    ),
  ).rejects.toMatchObject({ code: '23505', constraint: 'attempts_one_in_flight_per_job' });

  // Once the unknown attempt is settled, the next one may start.
  await settleAttemptWithoutResult(db.pool, first.id, 'failed', {
    code: 'operator: never happened',
  });
  await expect(
    createAttempt(db.pool, { jobId: job.id, seq: 2, provider: 'p2', exclusive: true }),
  ).resolves.toMatchObject({ state: 'starting' });
});

test('creating the same attempt twice returns the first, and attempt ids must derive from (job, seq)', async () => {
  const job = await newJob(db.pool);
  const a = await createAttempt(db.pool, {
    jobId: job.id,
    seq: 1,
    provider: 'p1',
    exclusive: true,
  });
  const b = await createAttempt(db.pool, {
    jobId: job.id,
    seq: 1,
    provider: 'p1',
    exclusive: true,
  });
  expect(b).toEqual(a);
  await expect(
    inRolledBackTransaction(db.pool, (client) =>
      client.query(
        `INSERT INTO attempts (id, job_id, seq, provider, exclusive, read_version) VALUES ('made-up', $1, 5, 'p1', false, 0)`,
        [job.id],
      ),
    ),
  ).rejects.toMatchObject({ code: '23514' });
});

test('an attempt whose provider stops cooling down between the refused INSERT and the look at its health is created, never reported as a job that does not exist', async () => {
  const job = await newJob(db.pool);
  await db.pool.query(
    `INSERT INTO provider_health (provider, cooldown_until) VALUES ('p1', now() + interval '1 hour')`,
  );
  // The look at the provider's health is held until the cool-down has ended, as its time would.
  const look = holdStatement('provider-health.unavailability', (values) => values[0] === 'p1');
  try {
    const creating = createAttempt(db.pool, {
      jobId: job.id,
      seq: 1,
      provider: 'p1',
      exclusive: true,
    });
    await look.reached;
    await db.pool.query(`UPDATE provider_health SET cooldown_until = NULL WHERE provider = 'p1'`);
    look.release();
    expect(await creating).toMatchObject({ seq: 1, provider: 'p1', state: 'starting' });
  } finally {
    look.restore();
    await db.pool.query(`DELETE FROM provider_health WHERE provider = 'p1'`);
  }
});

test('the looks at an unknown attempt back off from the first pause, doubling to the longest; two workers never take the same turn; an operator is announced once; a settled attempt is due for its wake-up until one is sent', async () => {
  // A provider of its own: other tests' attempts are never this test's turns.
  const { job, attempt } = await unknownFirstAttempt(db.pool, 'p-looked-at');
  const pauses = { firstMs: 1_000, maxMs: 4_000 };
  const schedule = async (look: { inMs?: number; needsOperator: boolean }) => {
    const result = await scheduleNextCheck(db.pool, attempt.id, pauses, look);
    const { rows } = await db.pool.query<{ delay: number; in_ms: number }>(
      `SELECT check_delay_ms AS delay,
              round(extract(epoch FROM next_check_at - now()) * 1000)::int AS in_ms
         FROM attempts WHERE id = $1`,
      [attempt.id],
    );
    return { ...result, delay: rows[0]!.delay, dueIn: rows[0]!.in_ms };
  };
  const delays = [];
  for (let i = 0; i < 4; i++) delays.push((await schedule({ needsOperator: false })).delay);
  expect(delays).toEqual([1_000, 2_000, 4_000, 4_000]);
  // A look that knows when asking again is worth it says so; the backoff is kept for after.
  const sooner = await schedule({ inMs: 250, needsOperator: true });
  expect(sooner).toMatchObject({ delay: 4_000, operatorNewlyNeeded: true });
  expect(sooner.dueIn).toBeLessThanOrEqual(250);
  expect((await schedule({ needsOperator: true })).operatorNewlyNeeded).toBe(false);

  // Due now: of two workers claiming at once, one takes it; the other finds nothing due.
  await db.pool.query('UPDATE attempts SET next_check_at = now() WHERE id = $1', [attempt.id]);
  const claim = { limit: 10, leaseMs: 60_000, providers: ['p-looked-at'] };
  const claims = await Promise.all([
    claimDueChecks(db.pool, claim),
    claimDueChecks(db.pool, claim),
  ]);
  expect(claims.flat()).toEqual([
    { attemptId: attempt.id, jobId: job.id, workflowId: job.workflowId, settled: false },
  ]);
  // A worker without the provider never takes it.
  await db.pool.query('UPDATE attempts SET next_check_at = now() WHERE id = $1', [attempt.id]);
  expect(await claimDueChecks(db.pool, { ...claim, providers: ['p-elsewhere'] })).toEqual([]);
  // Settled (by whatever path) while its turn was a minute off: its wake-up is due at once, and
  // stays due until a worker has sent it.
  await settleAttemptWithoutResult(db.pool, attempt.id, 'failed', { code: 'never_processed' });
  expect((await schedule({ needsOperator: true })).operatorNewlyNeeded).toBe(false);
  const wake = { attemptId: attempt.id, jobId: job.id, workflowId: job.workflowId, settled: true };
  expect(await claimDueChecks(db.pool, claim)).toEqual([wake]);
  await db.pool.query('UPDATE attempts SET next_check_at = now() WHERE id = $1', [attempt.id]);
  expect(await claimDueChecks(db.pool, claim)).toEqual([wake]);
  await wakeDone(db.pool, attempt.id);
  expect(await claimDueChecks(db.pool, claim)).toEqual([]);
});

test('notes are appended in one statement, each once and in order: a note the job already has is not added again', async () => {
  const job = await newJob(db.pool);
  const skipped = (provider: string) => ({ event: 'provider_skipped', provider, reason: 'x' });
  await addJobNotes(db.pool, job.id, [skipped('a'), skipped('b')]);
  await addJobNotes(db.pool, job.id, [skipped('b'), skipped('c'), skipped('a')]);
  await addJobNotes(db.pool, job.id, []);
  expect((await findJob(db.pool, job.id))?.notes).toEqual([
    skipped('a'),
    skipped('b'),
    skipped('c'),
  ]);
});

test('attempt states only move forward', async () => {
  const { attempt } = await runningFirstAttempt(db.pool);
  await settleAttemptWithoutResult(db.pool, attempt.id, 'failed', { code: 'http_400' });
  await expect(
    inRolledBackTransaction(db.pool, (client) =>
      client.query(`UPDATE attempts SET state = 'running', finished_at = NULL WHERE id = $1`, [
        attempt.id,
      ]),
    ),
  ).rejects.toThrow(/cannot move from failed to running/);
});

test('reverse-order finish: the attempt that returns first wins, the late one loses and its payload is dropped', async () => {
  const job = await newJob(db.pool);
  // Hedged-style: two non-exclusive attempts in flight at once. A leaves first...
  const a = await createAttempt(db.pool, {
    jobId: job.id,
    seq: 1,
    provider: 'p1',
    exclusive: false,
  });
  await beginProviderCall(db.pool, a.id);
  // ...B leaves second...
  const b = await createAttempt(db.pool, {
    jobId: job.id,
    seq: 2,
    provider: 'p2',
    exclusive: false,
  });
  await beginProviderCall(db.pool, b.id);
  expect([a.readVersion, b.readVersion]).toEqual([0, 0]);

  // ...B returns first and wins; A returns last and touches zero rows.
  await expect(
    recordAttemptResult(db.pool, { attemptId: b.id, result: { summary: 'from B' } }),
  ).resolves.toMatchObject({ outcome: 'won', ended: { type: 'summarize', status: 'succeeded' } });
  await expect(
    recordAttemptResult(db.pool, { attemptId: a.id, result: { summary: 'from A' } }),
  ).resolves.toEqual({
    outcome: 'lost',
    attemptId: a.id,
    winnerAttemptId: b.id,
    expectedVersion: 0,
    observedVersion: 1,
  });

  const { rows: jobs } = await db.pool.query(
    'SELECT result, completed_by, version FROM jobs WHERE id = $1',
    [job.id],
  );
  expect(jobs[0]).toEqual({ result: { summary: 'from B' }, completed_by: b.id, version: 1 });
  const { rows: races } = await db.pool.query(
    'SELECT losing_attempt_id, winning_attempt_id FROM race_events WHERE job_id = $1',
    [job.id],
  );
  expect(races).toEqual([{ losing_attempt_id: a.id, winning_attempt_id: b.id }]);
  const { rows: states } = await db.pool.query(
    'SELECT id, state FROM attempts WHERE job_id = $1 ORDER BY seq',
    [job.id],
  );
  expect(states).toEqual([
    { id: a.id, state: 'lost' },
    { id: b.id, state: 'succeeded' },
  ]);

  // Repeating either record (an activity retry) reports the same outcome and changes nothing:
  // the repeat did not end the job, so it says no end (its duration is observed once).
  const repeated = await recordAttemptResult(db.pool, {
    attemptId: b.id,
    result: { summary: 'again' },
  });
  expect(repeated).toMatchObject({ outcome: 'won', version: 1 });
  expect(repeated).not.toHaveProperty('ended');
  await expect(
    recordAttemptResult(db.pool, { attemptId: a.id, result: { summary: 'again' } }),
  ).resolves.toMatchObject({ outcome: 'lost', winnerAttemptId: b.id });
  const { rows: after } = await db.pool.query('SELECT result, version FROM jobs WHERE id = $1', [
    job.id,
  ]);
  expect(after[0]).toEqual({ result: { summary: 'from B' }, version: 1 });
});

test('concurrent results for one job: exactly one wins the compare-and-swap', async () => {
  const job = await newJob(db.pool);
  const attempts = [];
  for (let seq = 1; seq <= 8; seq++) {
    const attempt = await createAttempt(db.pool, {
      jobId: job.id,
      seq,
      provider: 'p1',
      exclusive: false,
    });
    await beginProviderCall(db.pool, attempt.id);
    attempts.push(attempt);
  }
  const outcomes = await Promise.all(
    attempts.map((a) =>
      recordAttemptResult(db.pool, { attemptId: a.id, result: { summary: a.id } }),
    ),
  );
  const winners = outcomes.filter((o) => o.outcome === 'won');
  expect(winners).toHaveLength(1);
  const { rows } = await db.pool.query('SELECT result, completed_by FROM jobs WHERE id = $1', [
    job.id,
  ]);
  expect(rows[0]).toEqual({
    result: { summary: winners[0]!.attemptId },
    completed_by: winners[0]!.attemptId,
  });
  const { rows: races } = await db.pool.query(
    'SELECT count(*)::int AS n FROM race_events WHERE job_id = $1',
    [job.id],
  );
  expect(races[0].n).toBe(7);
});

test('a finished job outcome cannot be overwritten, even by raw SQL', async () => {
  const { job, attempt } = await runningFirstAttempt(db.pool);
  await recordAttemptResult(db.pool, { attemptId: attempt.id, result: { summary: 'winner' } });
  await expect(
    inRolledBackTransaction(db.pool, (client) =>
      client.query(`UPDATE jobs SET result = '{"summary":"overwrite"}' WHERE id = $1`, [job.id]),
    ),
  ).rejects.toThrow(/outcome is final/);
  await expect(
    createAttempt(db.pool, { jobId: job.id, seq: 2, provider: 'p2', exclusive: true }),
  ).rejects.toThrow(/is succeeded; no attempt may start/);
});

test('32 concurrent results for one job, 100 times over: exactly one winner each time, never an overwrite', async () => {
  const pool = createPool(db.url, { max: 32 });
  try {
    for (let round = 0; round < 100; round++) {
      const job = await newJob(pool);
      const attempts = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          createAttempt(pool, { jobId: job.id, seq: i + 1, provider: 'p1', exclusive: false }),
        ),
      );
      await Promise.all(attempts.map((a) => beginProviderCall(pool, a.id)));
      const outcomes = await Promise.all(
        attempts.map((a) => recordAttemptResult(pool, { attemptId: a.id, result: { by: a.id } })),
      );
      const winners = outcomes.filter((o) => o.outcome === 'won');
      expect(winners).toHaveLength(1);
      const { rows } = await pool.query(
        `SELECT j.result, j.completed_by, j.version, (SELECT count(*)::int FROM race_events r WHERE r.job_id = j.id) AS races
           FROM jobs j WHERE j.id = $1`,
        [job.id],
      );
      expect(rows[0]).toEqual({
        result: { by: winners[0]!.attemptId },
        completed_by: winners[0]!.attemptId,
        version: 1,
        races: 31,
      });
    }
  } finally {
    await pool.end();
  }
}, 120_000);

test('a call never begins for a job that has ended: the attempt is cancelled in the same statement, and a cancel racing the start waits for it', async () => {
  const job = await newJob(db.pool);
  const first = await createAttempt(db.pool, {
    jobId: job.id,
    seq: 1,
    provider: 'p1',
    exclusive: true,
  });
  await finishJobWithoutResult(db.pool, job.id, 'cancelled', { code: 'cancelled' });
  const refused = await beginProviderCall(db.pool, first.id);
  expect(refused).toMatchObject({
    state: 'cancelled',
    startedAt: null,
    error: { code: 'job_not_open' },
  });

  // A start that comes while a cancel holds the job row, not yet committed, waits for it and
  // then refuses: it never reads the job as open from before the cancel.
  const cancelling = await newJob(db.pool);
  const waiting = await createAttempt(db.pool, {
    jobId: cancelling.id,
    seq: 1,
    provider: 'p1',
    exclusive: true,
  });
  const cancel = await db.pool.connect();
  try {
    await cancel.query('BEGIN');
    await finishJobWithoutResult(cancel, cancelling.id, 'cancelled', { code: 'cancelled' });
    const start = beginProviderCall(db.pool, waiting.id);
    expect(await waitingOrSettled(db.pool, 'WITH job AS', start)).toBe('waiting');
    await cancel.query('COMMIT');
    expect(await start).toMatchObject({
      state: 'cancelled',
      startedAt: null,
      error: { code: 'job_not_open' },
    });
  } finally {
    await cancel.query('ROLLBACK').catch(() => undefined);
    cancel.release();
  }

  // The other order: the start holds the job row (its statement in a transaction not yet
  // committed) when the cancel comes. The cancel waits for it; the call has begun, so the ending
  // makes the attempt unknown (its charge may still land), and its result, should it come,
  // loses the compare-and-swap.
  const other = await newJob(db.pool);
  const second = await createAttempt(db.pool, {
    jobId: other.id,
    seq: 1,
    provider: 'p1',
    exclusive: true,
  });
  const start = await db.pool.connect();
  try {
    await start.query('BEGIN');
    expect((await beginProviderCall(start, second.id)).state).toBe('running');
    const cancelled = finishJobWithoutResult(db.pool, other.id, 'cancelled', {
      code: 'cancelled',
    });
    expect(await waitingOrSettled(db.pool, 'UPDATE jobs SET terminal_status', cancelled)).toBe(
      'waiting',
    );
    // While it waits, the job is still open.
    expect((await findJob(db.pool, other.id))?.terminalStatus).toBeNull();
    await start.query('COMMIT');
    expect(await cancelled).toMatchObject({
      job: { terminalStatus: 'cancelled' },
      ended: { type: 'summarize', status: 'cancelled' },
    });
  } finally {
    await start.query('ROLLBACK').catch(() => undefined);
    start.release();
  }
  expect(await findAttempt(db.pool, second.id)).toMatchObject({
    state: 'unknown',
    error: { code: 'job_ended' },
  });
  expect(
    await recordAttemptResult(db.pool, { attemptId: second.id, result: { summary: 'late' } }),
  ).toMatchObject({ outcome: 'lost', winnerAttemptId: null });
});

test("a result that comes after a verdict settled its attempt is kept as a race, and its owner's endpoints get job.late_result; one whose job succeeded with another attempt gets nothing", async () => {
  await insertEndpoint(
    db.pool,
    'owner-late',
    { url: 'https://receiver.example/hooks', events: ['job.late_result'] },
    `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    20,
    parseSecretKeys(TEST_SECRET_KEYS),
  );
  // An operator's failed, given once the call was over; then the call's answer comes after all.
  const failedFirst = await newJob(db.pool, 'owner-late');
  const attempt = await createAttempt(db.pool, {
    jobId: failedFirst.id,
    seq: 1,
    provider: 'p1',
    exclusive: true,
  });
  await beginProviderCall(db.pool, attempt.id, { p1: 0 });
  expect(
    await reportAttemptFailure(db.pool, attempt.id, operatorsFailure('ops', 'no charge seen')),
  ).toMatchObject({ state: 'failed', error: { code: 'operator' } });
  expect(
    await recordAttemptResult(db.pool, { attemptId: attempt.id, result: { summary: 'late' } }),
  ).toMatchObject({ outcome: 'lost' });
  expect(await findAttempt(db.pool, attempt.id)).toMatchObject({ state: 'failed' });
  expect(await pendingEventKeys(db.pool, failedFirst.id)).toEqual([
    `job.late_result:${attempt.id}`,
  ]);

  // A loser of an ordinary race (its job succeeded with another attempt) is no news.
  const won = await newJob(db.pool, 'owner-late');
  const [a, b] = await Promise.all(
    [1, 2].map((seq) =>
      createAttempt(db.pool, { jobId: won.id, seq, provider: 'p1', exclusive: false }),
    ),
  );
  for (const one of [a!, b!]) await beginProviderCall(db.pool, one.id);
  await recordAttemptResult(db.pool, { attemptId: a!.id, result: { summary: 'first' } });
  await recordAttemptResult(db.pool, { attemptId: b!.id, result: { summary: 'second' } });
  expect(await findAttempt(db.pool, b!.id)).toMatchObject({ state: 'lost' });
  expect(await pendingEventKeys(db.pool, won.id)).toEqual([]);
});

describe('the queries that run all the time have indexes that fit them', () => {
  /** The plan PostgreSQL picks when it may not scan a whole table. */
  async function planOf(sql: string, params: unknown[] = []): Promise<string> {
    const client = await db.pool.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  }

  test('the hedge delay’s p95 reads a provider’s recent successes from their own partial index', async () => {
    const plan = await planOf(OBSERVED_P95_SQL, ['p1']);
    expect(plan).toMatch(/Index Scan using attempts_recent_successes_idx/);
  });

  test('the metrics of attempts in flight, unknown jobs and the oldest unknown attempt read the partial index of in-flight attempts', async () => {
    for (const sql of [ATTEMPTS_IN_FLIGHT_SQL, JOBS_UNKNOWN_SQL, OLDEST_UNKNOWN_SQL]) {
      const plan = await planOf(sql);
      expect(plan).toMatch(/attempts_in_flight_idx/);
      expect(plan).not.toMatch(/Seq Scan on attempts/);
    }
  });
});

test('a connection that dies inside a transaction, between two statements, fails that transaction and crashes nothing; the pool goes on', async () => {
  const pool = createPool(db.url, { max: 2 });
  const killer = new pg.Client({ connectionString: db.url });
  await killer.connect();
  try {
    const transaction = inTransaction(pool, async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // PostgreSQL goes away under a checked-out connection (a crash, a restart)…
      const ended = new Promise((resolve) => tx.once('end', resolve));
      await killer.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await ended;
      // …and the transaction's next statement fails.
      await tx.query('SELECT 1');
    });
    await expect(transaction).rejects.toThrow();
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await killer.end();
    await pool.end();
  }
});

test('a page of one status looks at a bounded number of the owner’s jobs: a sparse status comes over pages that may hold fewer than asked, each job once, in order', async () => {
  const owner = 'owner-sparse';
  for (let n = 0; n < 23; n += 1) await newJob(db.pool, owner);
  const made = (
    await db.pool.query<{ id: string }>(
      'SELECT id FROM jobs WHERE owner_id = $1 ORDER BY created_at DESC, id DESC',
      [owner],
    )
  ).rows.map((row) => row.id);
  // Every seventh job (newest first) has failed; the others are still open.
  const failed = made.filter((_, n) => n % 7 === 3);
  await db.pool.query(
    `UPDATE jobs SET terminal_status = 'failed', failure = '{"code":"declined"}', finished_at = now()
      WHERE id = ANY ($1)`,
    [failed],
  );
  const seen: string[] = [];
  const sizes: number[] = [];
  let after: Parameters<typeof listOwnedJobs>[2]['after'];
  for (let page = 0; page < 20; page += 1) {
    const { jobs, next } = await listOwnedJobs(db.pool, owner, {
      status: 'failed',
      limit: 2,
      statusScanRows: 5,
      ...(after ? { after } : {}),
    });
    seen.push(...jobs.map((job) => job.id));
    sizes.push(jobs.length);
    if (!next) break;
    after = next;
  }
  expect(seen).toEqual(failed);
  // Each page looked at five jobs: those of the status among them (at positions 3, 10 and 17),
  // fewer than asked and even none; the last page found the owner's history at its end.
  expect(sizes).toEqual([1, 0, 1, 1, 0]);
});
