import { randomUUID } from 'node:crypto';
import { removeCeiling, setCeiling } from '../../src/db/priceCeilings';
import { TEST_OWNER as BENCH_OWNER } from '../../test/support/identities';
import { Latencies } from '../support/latency';
import { runJobThroughApi, summarizeBody } from '../support/ours';
import { round2, type Scenario } from '../support/scenario';

/** The plan: a primary that has a bad day, and a fallback; both with the default retry and breaker. */
export const BAD_DAY_PLAN = ['day-primary', 'day-backup'];
/** The storm's plan under a price ceiling: the same primary, and a backup far dearer. */
const STORM_PLAN = ['day-primary', 'day-dear-backup'];
/** The backups' simulated model. */
const BACKUP_MODEL = 'sim-backup';
/** The primary's simulated model: the rate limit is injected for it alone. */
const PRIMARY_MODEL = 'sim-steady';

/**
 * A provider's bad day: jobs arrive at a steady pace over two providers while the primary
 * answers every call `429 Retry-After: 1` for a while and then recovers, beside the same load on
 * a healthy day. What it shows: no job fails (retries and the fallback carry them), and the
 * cooldown and the breaker keep the calls to the sick primary to a few per second, not one per
 * job.
 */
export const badDayScenario: Scenario = {
  name: 'bad day',
  async run({ env, smoke, log }) {
    const jobs = smoke ? 20 : 300;
    const sickMs = smoke ? 3_000 : 30_000;
    // Arrivals spread over a little more than the outage, so it begins and ends among them.
    const gapMs = Math.round((sickMs * 1.3) / jobs);
    const simulator = env.stack.simulator;

    const phase = async (day: 'healthy' | 'bad' | 'storm', plan = BAD_DAY_PLAN) => {
      const latency = new Latencies();
      const statuses: Record<string, number> = {};
      const sickFrom = Date.now();
      if (day !== 'healthy')
        simulator.inject({
          route: 'chat',
          model: PRIMARY_MODEL,
          forMs: sickMs,
          fault: { kind: 'rate_limited', retryAfterSeconds: 1 },
        });
      const runs: Array<Promise<void>> = [];
      for (let i = 0; i < jobs; i++) {
        runs.push(
          (async () => {
            const t0 = performance.now();
            const status = await runJobThroughApi(
              env.stack.apiUrl,
              `bad-day-${day}-${randomUUID()}`,
              summarizeBody({ providers: plan }),
            );
            latency.recordMs(performance.now() - t0);
            statuses[status] = (statuses[status] ?? 0) + 1;
          })(),
        );
        await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
      await Promise.all(runs);
      const refused = simulator
        .requests()
        .filter(
          (r) =>
            r.route === 'chat' &&
            r.model === PRIMARY_MODEL &&
            r.fault === 'rate_limited' &&
            Date.parse(r.at) >= sickFrom,
        ).length;
      // Calls a backup took while the primary was refused (the storm's backup is the only one
      // then serving its model).
      const backupCalls = simulator
        .requests()
        .filter(
          (r) => r.route === 'chat' && r.model === BACKUP_MODEL && Date.parse(r.at) >= sickFrom,
        ).length;
      return { latency, statuses, refused, backupCalls };
    };

    const healthy = await phase('healthy');
    // The healthy day's calls leave the breaker's count of failures in a row at zero.
    const bad = await phase('bad');
    // The same storm with a backup 16.7× dearer and a ceiling of 5× the primary: no call may go
    // to it. Its jobs wait out the storm on the primary's retries, or fail: that is reported.
    const ceiling = { ownerId: BENCH_OWNER, jobType: 'summarize' };
    await setCeiling(
      env.stack.pool,
      { ...ceiling, maxJobCost: null, maxMultiple: 5 },
      { actor: 'bench', reason: 'the bad-day row under a price ceiling' },
    );
    const storm = await phase('storm', STORM_PLAN).finally(() =>
      removeCeiling(env.stack.pool, ceiling),
    );
    const failed = jobs - (bad.statuses.succeeded ?? 0);
    const primaryPerSecond = bad.refused / (sickMs / 1000);
    log(
      `bad day: ${failed} of ${jobs} jobs not succeeded; ${bad.refused} calls to the sick primary in ${sickMs / 1000} s; p99 ${bad.latency.ms(99)} ms vs ${healthy.latency.ms(99)} ms healthy`,
    );
    const [p50, p99] = [bad.latency.ms(50), bad.latency.ms(99)];
    const [h50, h99] = [healthy.latency.ms(50), healthy.latency.ms(99)];
    return {
      comparisons: [
        {
          row: 'bad day',
          measure: `jobs not succeeded of ${jobs}, primary answering 429 Retry-After: 1 for ${sickMs / 1000} s`,
          ours: failed,
          unit: 'jobs',
          goal: '0',
          met: failed === 0,
        },
        {
          row: 'bad day',
          measure: 'calls sent to the sick primary, per second of its outage',
          ours: round2(primaryPerSecond),
          unit: '/s',
          goal: `a few per second, not one per job (${round2(1000 / gapMs)} jobs/s arrive)`,
          met: primaryPerSecond <= 3,
        },
        {
          row: 'bad day',
          measure: `calls to a backup 16.7× the primary's price under a 5× ceiling, in the same storm (${jobs - (storm.statuses.succeeded ?? 0)} of ${jobs} jobs not succeeded)`,
          ours: storm.backupCalls,
          unit: 'calls',
          goal: '0',
          met: storm.backupCalls === 0,
        },
        {
          row: 'bad day',
          measure: 'p50 job time, bad day vs healthy day',
          ours: p50,
          baseline: h50,
          unit: 'ms',
          ratio: round2(p50 / h50),
          goal: 'reported',
        },
        {
          row: 'bad day',
          measure: 'p99 job time, bad day vs healthy day',
          ours: p99,
          baseline: h99,
          unit: 'ms',
          ratio: round2(p99 / h99),
          goal: 'reported',
        },
      ],
      details: Object.fromEntries(
        (
          [
            ['healthy', healthy],
            ['bad', bad],
            ['storm under a price ceiling', storm],
          ] as const
        ).map(([day, result]) => [
          day,
          {
            jobs: result.latency.count,
            'p50 ms': result.latency.ms(50),
            'p99 ms': result.latency.ms(99),
            statuses: result.statuses,
            'calls refused with 429': result.refused,
          },
        ]),
      ),
      latencyCurves: (['healthy', 'bad'] as const).map((day) => ({
        chart: 'a provider’s bad day, whole job',
        series: `${day} day`,
        points: (day === 'healthy' ? healthy : bad).latency.cdf(),
      })),
    };
  },
};
