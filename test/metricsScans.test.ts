import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate, MIGRATIONS_DIR } from '../src/db/migrate';
import { createMetrics } from '../src/telemetry/metrics';
import { createTestDatabase } from './support/database';

/**
 * A scrape of /metrics reads no big table whole, and its all-time counts stay right as attempts
 * are added, change state and go away. Its own database, loaded with many rows and touched by
 * nothing else, so PostgreSQL's scan counters show exactly what the scrape read.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let migrationsBefore0005: string;
/** The one connection the metrics read through: its scans are the ones counted. */
/** One connection that is never closed while idle: its backend's statistics are the ones read. */
let scraper: pg.Pool;

const BIG_TABLES = ['jobs', 'attempts', 'race_events'];
const LOADED_JOBS = 20_000;
const LOST_ATTEMPTS = 500;
const UNKNOWN_JOBS = 3;

/** Jobs that failed (one failed attempt each), some with a lost attempt and a race event, and a few open jobs with an unknown attempt. */
async function load(db: pg.ClientBase | pg.Pool, prefix: string): Promise<void> {
  await db.query(
    `INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input, provider_plan,
                       workflow_id, terminal_status, finished_at, failure)
     SELECT 'load', $1 || i, repeat('a', 64), 'summarize', '{}', ARRAY['p'], 'job/load/' || $1 || i,
            'failed', now(), '{}'::jsonb
       FROM generate_series(1, $2::int) i`,
    [prefix, LOADED_JOBS],
  );
  await db.query(
    `INSERT INTO attempts (id, job_id, seq, provider, state, exclusive, read_version, finished_at)
     SELECT id::text || ':1', id, 1, 'p', 'failed', true, 0, now() FROM jobs
      WHERE idempotency_key LIKE $1 || '%'`,
    [prefix],
  );
  await db.query(
    `INSERT INTO attempts (id, job_id, seq, provider, state, exclusive, read_version, finished_at)
     SELECT id::text || ':2', id, 2, 'p', 'lost', false, 0, now() FROM jobs
      WHERE idempotency_key LIKE $1 || '%' ORDER BY id LIMIT $2`,
    [prefix, LOST_ATTEMPTS],
  );
  await db.query(
    `INSERT INTO race_events (job_id, losing_attempt_id, expected_version, observed_version)
     SELECT job_id, id, 0, 1 FROM attempts WHERE seq = 2 AND id IN (
       SELECT a.id FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE j.idempotency_key LIKE $1 || '%')`,
    [prefix],
  );
  await db.query(
    `WITH open AS (
       INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input,
                         provider_plan, workflow_id)
       SELECT 'load', $1 || 'open-' || i, repeat('a', 64), 'charge', '{}', ARRAY['p'],
              'job/load/' || $1 || 'open-' || i
         FROM generate_series(1, $2::int) i RETURNING id)
     INSERT INTO attempts (id, job_id, seq, provider, state, exclusive, read_version)
     SELECT id::text || ':1', id, 1, 'p', 'unknown', true, 0 FROM open`,
    [prefix, UNKNOWN_JOBS],
  );
  await db.query('ANALYZE jobs, attempts, race_events');
}

/** The sequential scans PostgreSQL has counted on the big tables, this connection's included. */
async function seqScans(): Promise<Record<string, number>> {
  // Pending counts of this connection reach the shared statistics when it next goes idle.
  await scraper.query('SELECT pg_stat_force_next_flush()');
  await scraper.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await scraper.query<{ relname: string; seq_scan: string }>(
    'SELECT relname, seq_scan FROM pg_stat_user_tables WHERE relname = ANY($1)',
    [BIG_TABLES],
  );
  return Object.fromEntries(rows.map((row) => [row.relname, Number(row.seq_scan)]));
}

async function trueCounts(): Promise<{ attempts: Record<string, number>; races: number }> {
  const byState = await database.pool.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM attempts GROUP BY state',
  );
  const races = await database.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM race_events',
  );
  return {
    attempts: Object.fromEntries(byState.rows.map((row) => [row.state, row.n])),
    races: races.rows[0]!.n,
  };
}

function value(text: string, metric: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${metric} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function scrape(): Promise<string> {
  const metrics = createMetrics(scraper, { waitsInProgress: () => 0 });
  return metrics.registry.metrics();
}

beforeAll(async () => {
  // The first four migrations only, loaded, then the fifth: its counts must start from the rows.
  migrationsBefore0005 = await mkdtemp(path.join(tmpdir(), 'onejob-migrations-'));
  for (const file of await readdir(MIGRATIONS_DIR)) {
    if (/^000[1-4]_/.test(file))
      await cp(path.join(MIGRATIONS_DIR, file), path.join(migrationsBefore0005, file));
  }
  database = await createTestDatabase(migrationsBefore0005);
  await load(database.pool, 'before-');
  await migrate(database.pool);
  scraper = new pg.Pool({ connectionString: database.url, max: 1, idleTimeoutMillis: 0 });
});
afterAll(async () => {
  await scraper?.end();
  await database?.drop();
  if (migrationsBefore0005) await rm(migrationsBefore0005, { recursive: true, force: true });
});

test('the counts start from the rows that existed before the counting began', async () => {
  const text = await scrape();
  const truth = await trueCounts();
  expect(truth.attempts).toEqual({
    failed: LOADED_JOBS,
    lost: LOST_ATTEMPTS,
    unknown: UNKNOWN_JOBS,
  });
  for (const [state, n] of Object.entries(truth.attempts))
    expect([state, value(text, `onejob_attempts{state="${state}"}`)]).toEqual([state, n]);
  expect(value(text, 'onejob_race_events')).toBe(truth.races);
  expect(value(text, 'onejob_jobs_unknown')).toBe(UNKNOWN_JOBS);
});

test('a scrape scans none of the big tables, however many rows they hold', async () => {
  await load(database.pool, 'more-');
  const before = await seqScans();
  // The measure can see a whole-table count: this one is.
  await scraper.query('SELECT count(*) FROM attempts');
  const afterCount = await seqScans();
  expect(afterCount.attempts).toBe(before.attempts! + 1);

  const text = await scrape();
  await scrape();
  expect(await seqScans()).toEqual(afterCount);
  expect(value(text, 'onejob_attempts{state="failed"}')).toBe(2 * LOADED_JOBS);
  expect(value(text, 'onejob_attempts_in_flight{state="unknown"}')).toBe(2 * UNKNOWN_JOBS);
});

test('the counts follow attempts as they change state, and as jobs and their attempts go away', async () => {
  // Unknown attempts settle (one succeeds: its job with it), new attempts start, a job is deleted.
  const unknown = await database.pool.query<{ id: string; job_id: string }>(
    `SELECT id, job_id FROM attempts WHERE state = 'unknown' ORDER BY id`,
  );
  const [first, second] = unknown.rows;
  await database.pool.query(
    `UPDATE attempts SET state = 'failed', finished_at = now() WHERE id = $1`,
    [first!.id],
  );
  await database.pool.query(
    `INSERT INTO attempts (id, job_id, seq, provider, state, exclusive, read_version)
     VALUES ($1 || ':2', $1::uuid, 2, 'p', 'starting', false, 0)`,
    [second!.job_id],
  );
  // A state-less update is no change of state.
  await database.pool.query(`UPDATE attempts SET updated_at = now() WHERE id = $1`, [second!.id]);
  await database.pool.query(
    `DELETE FROM jobs WHERE id IN (SELECT job_id FROM race_events ORDER BY id LIMIT 7)`,
  );

  const text = await scrape();
  const truth = await trueCounts();
  for (const state of ['starting', 'failed', 'lost', 'unknown'])
    expect([state, value(text, `onejob_attempts{state="${state}"}`)]).toEqual([
      state,
      truth.attempts[state] ?? 0,
    ]);
  expect(value(text, 'onejob_race_events')).toBe(truth.races);
  expect(truth.races).toBe(2 * LOST_ATTEMPTS - 7);
  // What was folded is gone from the deltas, so they stay small.
  const { rows } = await database.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM metric_deltas',
  );
  expect(rows[0]!.n).toBe(0);
});

test('scrapes folding at the same time count every change once', async () => {
  const truthBefore = await trueCounts();
  // Four replicas, one connection each (a pool of one queues the collectors' queries in turn).
  const others = Array.from(
    { length: 4 },
    () => new pg.Pool({ connectionString: database.url, max: 1 }),
  );
  try {
    await Promise.all([
      load(database.pool, 'racing-'),
      ...others.map((client) =>
        createMetrics(client, { waitsInProgress: () => 0 }).registry.metrics(),
      ),
    ]);
    await Promise.all(
      others.map((client) =>
        createMetrics(client, { waitsInProgress: () => 0 }).registry.metrics(),
      ),
    );
  } finally {
    await Promise.all(others.map((client) => client.end()));
  }
  const text = await scrape();
  const truth = await trueCounts();
  expect(truth.attempts.failed).toBe((truthBefore.attempts.failed ?? 0) + LOADED_JOBS);
  expect(value(text, 'onejob_attempts{state="failed"}')).toBe(truth.attempts.failed);
  expect(value(text, 'onejob_race_events')).toBe(truth.races);
});
