import { randomUUID } from 'node:crypto';
import { TEST_OWNER } from '../../test/support/identities';
import { freshKey, hammer, newMeasurement, type HttpMeasurement } from '../support/load';
import { drainJobs, jsonHeaders, summarizeBody, SUMMARY_TEXT } from '../support/ours';
import { round2, type Comparison, type Scenario } from '../support/scenario';

/**
 * Our three request paths as the jobs table grows: 10³, 10⁵ and 10⁶ rows of this owner, loaded
 * in bulk with SQL (finished jobs, each with the input a real one has). Creates need a workflow,
 * so they and the replays use jobs made through the API at each size. Runs first, on the
 * benchmark's fresh table, and removes its bulk rows at the end.
 */
export const growthScenario: Scenario = {
  name: 'growth',
  async run({ env, smoke, log }) {
    const { pool, apiUrl } = env.stack;
    const sizes = smoke ? [1_000, 4_000] : [1_000, 100_000, 1_000_000];
    const seconds = smoke ? 1 : 5;
    const body = summarizeBody();
    const at: Record<number, Record<string, HttpMeasurement>> = {};
    const bytesPerJob: Record<string, number> = {};
    let loaded = 0;
    for (const size of sizes) {
      const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
      const missing = size - rows[0]!.n;
      if (missing > 0) {
        await pool.query(
          `INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input,
                             provider_plan, workflow_id, terminal_status, failure, finished_at,
                             admitted_at, created_at)
           SELECT $1, 'bulk-' || g, encode(sha256(('bulk-' || g)::bytea), 'hex'), 'summarize',
                  jsonb_build_object('text', $2::text), ARRAY['simulator'], 'bulk-' || g, 'failed',
                  '{"kind": "bulk"}', now(), now(), now() - make_interval(secs => g)
             FROM generate_series($3::int, $4::int) AS g`,
          [TEST_OWNER, SUMMARY_TEXT, loaded + 1, loaded + missing],
        );
        loaded += missing;
        await pool.query('ANALYZE jobs');
      }
      const measured = {
        create: newMeasurement(),
        replay: newMeasurement(),
        'list page': newMeasurement(),
      };
      const prefix = `growth-${size}-`;
      const created: string[] = [];
      const makeKey = freshKey(prefix);
      await hammer(
        {
          url: `${apiUrl}/v1/jobs`,
          method: 'POST',
          headers: jsonHeaders(),
          body,
          key: () => {
            const key = makeKey();
            created.push(key);
            return key;
          },
          expectedStatus: 201,
        },
        8,
        seconds,
        measured.create,
      );
      await drainJobs(pool, prefix);
      await hammer(
        {
          url: `${apiUrl}/v1/jobs`,
          method: 'POST',
          headers: jsonHeaders(),
          body,
          key: () => created[Math.floor(Math.random() * created.length)] ?? randomUUID(),
          expectedStatus: 200,
        },
        16,
        seconds,
        measured.replay,
      );
      await hammer(
        {
          url: `${apiUrl}/v1/jobs?limit=20`,
          method: 'GET',
          headers: jsonHeaders(),
          expectedStatus: 200,
        },
        16,
        seconds,
        measured['list page'],
      );
      const size_ = await pool.query<{ bytes: string; n: string }>(
        `SELECT pg_total_relation_size('jobs')::text AS bytes, count(*)::text AS n FROM jobs`,
      );
      bytesPerJob[String(size)] = Math.round(
        Number(size_.rows[0]!.bytes) / Number(size_.rows[0]!.n),
      );
      at[size] = measured;
      log(`growth at ${size} rows: create p50 ${measured.create.latency.ms(50)} ms`);
    }
    await pool.query(`DELETE FROM jobs WHERE starts_with(idempotency_key, 'bulk-')`);
    await pool.query('VACUUM ANALYZE jobs');

    const small = at[sizes[0]!]!;
    const large = at[sizes[sizes.length - 1]!]!;
    const comparisons: Comparison[] = [];
    for (const path of Object.keys(small)) {
      for (const p of [50, 99]) {
        const [l, s] = [large[path]!.latency.ms(p), small[path]!.latency.ms(p)];
        comparisons.push({
          row: 'growth',
          measure: `${path} p${p} at ${sizes[sizes.length - 1]!.toLocaleString('en')} rows vs ${sizes[0]!.toLocaleString('en')}`,
          ours: l,
          baseline: s,
          unit: 'ms',
          ratio: round2(l / s),
          goal: '≤ 1.2×',
          met: l / s <= 1.2,
        });
      }
    }
    return {
      comparisons,
      details: {
        ...Object.fromEntries(
          sizes.map((size) => [
            `${size.toLocaleString('en')} rows`,
            Object.fromEntries(
              Object.entries(at[size]!).map(([path, m]) => [
                path,
                {
                  'p50 ms': m.latency.ms(50),
                  'p99 ms': m.latency.ms(99),
                  requests: m.requests,
                  unexpected: m.unexpected,
                },
              ]),
            ),
          ]),
        ),
        'bytes per job (jobs table and its indexes)': bytesPerJob,
      },
    };
  },
};
