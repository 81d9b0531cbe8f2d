import pg from 'pg';
import { createMetrics } from '../src/telemetry/metrics';
import { createTestDatabase } from './support/database';

/**
 * The webhook metrics a scrape reports (backlog, the oldest pending, tries by outcome, fan-out,
 * endpoints held by their breaker) are right, follow deliveries as they change and go away, and
 * are read without scanning a delivery, try, endpoint or breaker table. Its own database, so
 * PostgreSQL's scan counters show exactly what the scrape read.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** One connection that is never closed while idle: its backend's statistics are the ones read. */
let scraper: pg.Pool;

const TABLES = [
  'webhook_deliveries',
  'webhook_delivery_tries',
  'webhook_endpoints',
  'webhook_endpoint_health',
];
const JOBS = 5_000;
const ENDPOINTS_PER_OWNER = 4;
const OWNERS = 2_000;

beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.pool;
  // Many owners' endpoints, each with a breaker that counted a failure and holds nothing; a few
  // held now, a few whose hold is over, one held but deleted.
  await db.query(
    `INSERT INTO webhook_endpoints (owner_id, url, events)
     SELECT 'owner-' || (i / $2), 'https://receiver.example/' || i, ARRAY['job.succeeded']
       FROM generate_series(0, $1::int * $2::int - 1) i`,
    [OWNERS, ENDPOINTS_PER_OWNER],
  );
  await db.query(
    `INSERT INTO webhook_endpoint_health (endpoint_id, failures) SELECT id, 1 FROM webhook_endpoints`,
  );
  await db.query(
    `UPDATE webhook_endpoint_health SET held_until = now() + interval '1 hour', held_reason = 'held'
      WHERE endpoint_id IN (SELECT id FROM webhook_endpoints ORDER BY id LIMIT 4)`,
  );
  await db.query(
    `UPDATE webhook_endpoints SET deleted_at = now()
      WHERE id = (SELECT id FROM webhook_endpoints ORDER BY id LIMIT 1)`,
  );
  await db.query(
    `UPDATE webhook_endpoint_health SET held_until = now() - interval '1 minute', held_reason = 'was held'
      WHERE endpoint_id IN (SELECT id FROM webhook_endpoints ORDER BY id DESC LIMIT 2)`,
  );
  // Jobs of one owner, ended: its four endpoints each get an event, in one statement.
  await db.query(
    `INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input, provider_plan,
                       workflow_id, terminal_status, finished_at, failure)
     SELECT 'owner-7', 'hook-' || i, repeat('a', 64), 'summarize', '{}', ARRAY['p'],
            'job/hook/' || i, 'failed', now(), '{}'::jsonb
       FROM generate_series(1, $1::int) i`,
    [JOBS],
  );
  await db.query(
    `INSERT INTO webhook_deliveries (job_id, endpoint_id, event, event_key)
     SELECT j.id, e.id, 'job.succeeded', 'job.succeeded'
       FROM jobs j JOIN webhook_endpoints e ON e.owner_id = j.owner_id`,
  );
  // Most were delivered at the first try, some refused then failed, some got no answer, some
  // were gone; a few still wait, one of them for an hour.
  await db.query(
    `WITH ranked AS (SELECT id, row_number() OVER (ORDER BY id) AS r FROM webhook_deliveries)
     UPDATE webhook_deliveries d
        SET state = CASE WHEN r % 10 < 6 THEN 'delivered' WHEN r % 10 = 6 THEN 'failed'
                         WHEN r % 10 = 7 THEN 'abandoned' ELSE 'pending' END,
            ended_at = CASE WHEN r % 10 < 8 THEN now() END,
            body = CASE WHEN r % 10 < 6 THEN '{}' END,
            tries = CASE WHEN r % 10 < 8 THEN 1 ELSE 0 END
       FROM ranked WHERE ranked.id = d.id`,
  );
  await db.query(
    `INSERT INTO webhook_delivery_tries (delivery_id, n, status, duration_ms)
     SELECT id, 1, CASE state WHEN 'delivered' THEN 204 WHEN 'abandoned' THEN 410
                              ELSE (CASE WHEN position % 2 = 0 THEN 500 END) END, 10
       FROM webhook_deliveries WHERE state <> 'pending'`,
  );
  await db.query(
    `UPDATE webhook_deliveries SET created_at = now() - interval '1 hour'
      WHERE id = (SELECT id FROM webhook_deliveries WHERE state = 'pending' ORDER BY id LIMIT 1)`,
  );
  await db.query(`ANALYZE ${TABLES.join(', ')}`);
  scraper = new pg.Pool({ connectionString: database.url, max: 1, idleTimeoutMillis: 0 });
});
afterAll(async () => {
  await scraper?.end();
  await database?.drop();
});

function value(text: string, metric: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${metric} `));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

async function scrape(): Promise<string> {
  return createMetrics(scraper, { waitsInProgress: () => 0 }).registry.metrics();
}

async function seqScans(): Promise<Record<string, number>> {
  await scraper.query('SELECT pg_stat_force_next_flush()');
  await scraper.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await scraper.query<{ relname: string; seq_scan: string }>(
    'SELECT relname, seq_scan FROM pg_stat_user_tables WHERE relname = ANY($1)',
    [TABLES],
  );
  return Object.fromEntries(rows.map((row) => [row.relname, Number(row.seq_scan)]));
}

async function truth() {
  const q = async (sql: string) => (await database.pool.query<{ k: string; n: number }>(sql)).rows;
  return {
    states: Object.fromEntries(
      (await q('SELECT state AS k, count(*)::int AS n FROM webhook_deliveries GROUP BY state')).map(
        (row) => [row.k, row.n],
      ),
    ),
    tries: Object.fromEntries(
      (
        await q(`SELECT CASE WHEN status IS NULL THEN 'no_answer'
                             WHEN status BETWEEN 200 AND 299 THEN 'delivered'
                             WHEN status = 410 THEN 'gone' ELSE 'refused' END AS k,
                        count(*)::int AS n
                   FROM webhook_delivery_tries GROUP BY 1`)
      ).map((row) => [row.k, row.n]),
    ),
  };
}

test('a scrape reports the backlog, its oldest, tries by outcome, fan-out and endpoints held, scanning none of the webhook tables', async () => {
  const before = await seqScans();
  const text = await scrape();
  await scrape();
  expect(await seqScans()).toEqual(before);

  const { states, tries } = await truth();
  expect(Object.keys(states).sort()).toEqual(['abandoned', 'delivered', 'failed', 'pending']);
  for (const [state, n] of Object.entries(states))
    expect([state, value(text, `onejob_webhook_deliveries{state="${state}"}`)]).toEqual([state, n]);
  expect(Object.keys(tries).sort()).toEqual(['delivered', 'gone', 'no_answer', 'refused']);
  for (const [outcome, n] of Object.entries(tries))
    expect([outcome, value(text, `onejob_webhook_tries_total{outcome="${outcome}"}`)]).toEqual([
      outcome,
      n,
    ]);
  expect(value(text, 'onejob_webhook_deliveries_written_total')).toBe(JOBS * ENDPOINTS_PER_OWNER);
  expect(value(text, 'onejob_webhook_events_written_total')).toBe(JOBS);
  const oldest = value(text, 'onejob_webhook_oldest_pending_seconds');
  expect(oldest).toBeGreaterThanOrEqual(3_600);
  expect(oldest).toBeLessThan(3_600 + 600);
  // Four held now, one of them deleted; the holds that are over are not counted.
  expect(value(text, 'onejob_webhook_endpoints_held')).toBe(3);
  // No label names an endpoint.
  expect(text).not.toMatch(/onejob_webhook_[a-z_]+\{[^}]*endpoint/);
});

test('the counts follow deliveries as they end and as their jobs go away; tries and fan-out are all-time and never go down', async () => {
  const first = await scrape();
  await database.pool.query(
    `UPDATE webhook_deliveries SET state = 'delivered', ended_at = now(), body = '{}'
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = 'pending' ORDER BY id LIMIT 5)`,
  );
  // Updates that move no state are no change of state.
  await database.pool.query(
    `UPDATE webhook_deliveries SET claimed_until = now(), claim_token = gen_random_uuid()
      WHERE state = 'pending'`,
  );
  await database.pool.query(
    `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs ORDER BY id LIMIT 7)`,
  );
  const text = await scrape();
  const { states } = await truth();
  for (const state of ['pending', 'delivered', 'failed', 'abandoned'])
    expect([state, value(text, `onejob_webhook_deliveries{state="${state}"}`)]).toEqual([
      state,
      states[state] ?? 0,
    ]);
  for (const metric of [
    'onejob_webhook_tries_total{outcome="delivered"}',
    'onejob_webhook_deliveries_written_total',
    'onejob_webhook_events_written_total',
  ])
    expect([metric, value(text, metric)]).toEqual([metric, value(first, metric)]);
  const { rows } = await database.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM metric_deltas',
  );
  expect(rows[0]!.n).toBe(0);
});
