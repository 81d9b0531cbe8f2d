import { CpuMeter } from '../support/cpu';
import { interleaved, newJobsMeasurement, runJobsFor, type JobsMeasurement } from '../support/load';
import { jsonHeaders, runJobThroughApi, summarizeBody } from '../support/ours';
import { profileWorkflows, transactionCount } from '../support/profile';
import { round2, type Scenario } from '../support/scenario';

const USERS = 32;

interface Side extends JobsMeasurement {
  transactions: number;
  cpuMsPerJob: Record<string, number>;
}

/**
 * Whole jobs, sustained: 32 clients each create a summarize job and wait for it to succeed, then
 * the next, for 60 s per side (two turns of 30 s, taking turns with the baseline). Ours goes
 * through the API (create, then long-poll the job); the baseline's `POST /run` starts the bare
 * workflow (one activity: the same provider call and one INSERT) and answers when it is done.
 */
export const endToEndScenario: Scenario = {
  name: 'end to end',
  async run({ env, smoke, log }) {
    const turnSeconds = smoke ? 2 : 30;
    const body = summarizeBody();
    const fresh = (): Side => ({ ...newJobsMeasurement(), transactions: 0, cpuMsPerJob: {} });
    const sides = { ours: fresh(), baseline: fresh() };
    const runOne = {
      ours: async (key: string) =>
        (await runJobThroughApi(env.stack.apiUrl, key, body)) === 'succeeded',
      baseline: async (key: string) => {
        const answer = await fetch(`${env.baseline.url}/run`, {
          method: 'POST',
          headers: { ...jsonHeaders(), 'idempotency-key': key },
          body,
        });
        await answer.arrayBuffer();
        return answer.status === 200;
      },
    };
    const turn = (name: keyof typeof sides) => async () => {
      const side = sides[name];
      const before = await transactionCount(env.stack.pool);
      const cpuBefore = env.cpu.read();
      const jobsBefore = side.completed + side.failed;
      await runJobsFor(USERS, turnSeconds, `e2e-${name}`, runOne[name], side);
      const cpu = CpuMeter.perUnit(
        cpuBefore,
        env.cpu.read(),
        side.completed + side.failed - jobsBefore,
      );
      // Each turn's figures per job, averaged over the turns.
      for (const [part, ms] of Object.entries(cpu))
        side.cpuMsPerJob[part] = round2(
          ((side.cpuMsPerJob[part] ?? 0) * (side.rate.length - 1) + ms) / side.rate.length,
        );
      side.transactions += (await transactionCount(env.stack.pool)) - before;
    };
    await interleaved(smoke ? 1 : 2, [{ run: turn('ours') }, { run: turn('baseline') }]);

    const jobsPerSecond = (side: Side) => side.completed / side.seconds;
    const [o, b] = [jobsPerSecond(sides.ours), jobsPerSecond(sides.baseline)];
    log(`end to end: ours ${o.toFixed(1)} jobs/s, baseline ${b.toFixed(1)} jobs/s`);

    // Where a job's time goes: a sample of each side's workflows, read back from Temporal.
    const sample = (keys: string[]) => keys.slice(0, smoke ? 5 : 50);
    const { rows } = await env.stack.pool.query<{ workflow_id: string }>(
      'SELECT workflow_id FROM jobs WHERE idempotency_key = ANY($1)',
      [sample(sides.ours.keys)],
    );
    const profile = {
      ours: await profileWorkflows(
        env.stack.temporal,
        rows.map((row) => row.workflow_id),
      ),
      baseline: await profileWorkflows(
        env.stack.temporal,
        sample(sides.baseline.keys).map((key) => `baseline-run-${key}`),
      ),
    };
    const perJob = (side: Side) =>
      round2(side.transactions / Math.max(1, side.completed + side.failed));

    return {
      comparisons: [
        {
          row: 'end to end',
          measure: `jobs/s, ${USERS} clients, ${turnSeconds * (smoke ? 1 : 2)} s`,
          ours: round2(o),
          baseline: round2(b),
          unit: 'jobs/s',
          ratio: round2(o / b),
          goal: '≥ 0.8× baseline',
          met: o / b >= 0.8,
        },
        {
          row: 'end to end',
          measure: 'PostgreSQL transactions per job (the whole database, waits included)',
          ours: perJob(sides.ours),
          baseline: perJob(sides.baseline),
          unit: 'transactions',
          goal: '≤ 6 (each named in docs/benchmark.md)',
          met: perJob(sides.ours) <= 6,
        },
      ],
      details: Object.fromEntries(
        Object.entries(sides).map(([name, side]) => [
          name,
          {
            'jobs succeeded': side.completed,
            'jobs not succeeded': side.failed,
            'jobs/s': round2(jobsPerSecond(side)),
            'job p50 ms': side.latency.ms(50),
            'job p99 ms': side.latency.ms(99),
            'PostgreSQL transactions per job': perJob(side),
            ...profile[name as keyof typeof profile],
            'CPU ms per job, by process': side.cpuMsPerJob,
          },
        ]),
      ),
      latencyCurves: Object.entries(sides).map(([series, side]) => ({
        chart: 'whole job, 32 clients',
        series,
        points: side.latency.cdf(),
      })),
      rateCurves: Object.entries(sides).map(([series, side]) => ({
        chart: 'jobs completed per second',
        series,
        perSecond: side.rate.flatMap((rate) => rate.series()),
      })),
    };
  },
};
