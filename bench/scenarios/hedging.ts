import { randomUUID } from 'node:crypto';
import { BENCH_HEDGE_DELAY_MS } from '../support/environment';
import { Latencies } from '../support/latency';
import { runJobThroughApi, summarizeBody } from '../support/ours';
import { round2, type Scenario } from '../support/scenario';

const USERS = 8;
const PLAN = ['tail-a', 'tail-b'];

/**
 * Completion time of jobs on a heavy-tailed provider (`sim-heavytail`: ~60 ms, one call in 50
 * takes 2–4 s), hedged against the same jobs unhedged. Each client alternates the two modes, so
 * both see the same machine. The cost is the provider calls per job, counted from the attempts
 * table.
 */
export const hedgingScenario: Scenario = {
  name: 'hedging',
  async run({ env, smoke, log }) {
    const jobsPerMode = smoke ? 10 : 500;
    const modes = ['hedged', 'exclusive'] as const;
    const latency = { hedged: new Latencies(), exclusive: new Latencies() };
    const statuses: Record<string, number> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: USERS }, async () => {
        while (next < jobsPerMode * 2) {
          const mode = modes[next++ % 2]!;
          const t0 = performance.now();
          const status = await runJobThroughApi(
            env.stack.apiUrl,
            `hedge-${mode}-${randomUUID()}`,
            summarizeBody({ providers: PLAN, mode }),
          );
          latency[mode].recordMs(performance.now() - t0);
          statuses[`${mode} ${status}`] = (statuses[`${mode} ${status}`] ?? 0) + 1;
        }
      }),
    );
    const { rows } = await env.stack.pool.query<{ mode: string; calls: string; jobs: string }>(
      `SELECT j.mode, count(a.id)::text AS calls, count(DISTINCT j.id)::text AS jobs
         FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id
        WHERE starts_with(j.idempotency_key, 'hedge-') GROUP BY j.mode`,
    );
    const callsPerJob = Object.fromEntries(
      rows.map((row) => [row.mode, Number(row.calls) / Number(row.jobs)]),
    );
    const extraCalls = (callsPerJob.hedged ?? 0) / (callsPerJob.exclusive ?? 1) - 1;
    const [h, e] = [latency.hedged.ms(99), latency.exclusive.ms(99)];
    log(
      `hedging: p99 hedged ${h} ms, exclusive ${e} ms; ${(extraCalls * 100).toFixed(1)} % more calls`,
    );
    return {
      comparisons: [
        {
          row: 'hedging',
          measure: `p99 job time, hedged vs unhedged (hedge after ${BENCH_HEDGE_DELAY_MS} ms)`,
          ours: h,
          baseline: e,
          unit: 'ms',
          ratio: round2(e / h),
          goal: '≥ 5× lower',
          met: e / h >= 5,
        },
        {
          row: 'hedging',
          measure: 'extra provider calls per job',
          ours: round2(extraCalls * 100),
          unit: '%',
          goal: '≤ 10 %',
          met: extraCalls <= 0.1,
        },
      ],
      details: {
        ...Object.fromEntries(
          modes.map((mode) => [
            mode,
            {
              jobs: latency[mode].count,
              'p50 ms': latency[mode].ms(50),
              'p99 ms': latency[mode].ms(99),
              'p99.9 ms': latency[mode].ms(99.9),
              'provider calls per job': round2(callsPerJob[mode] ?? Number.NaN),
            },
          ]),
        ),
        statuses,
      },
      latencyCurves: modes.map((mode) => ({
        chart: 'heavy-tailed provider, whole job',
        series: mode,
        points: latency[mode].cdf(),
      })),
    };
  },
};
