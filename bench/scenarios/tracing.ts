import path from 'node:path';
import { obtainJaeger, startJaeger } from '../../tools/stack/jaeger';
import { BENCH_OUTPUT, startBenchStack } from '../support/environment';
import { interleaved, newJobsMeasurement, runJobsFor, type JobsMeasurement } from '../support/load';
import { runJobThroughApi, summarizeBody } from '../support/ours';
import { round2, type Scenario } from '../support/scenario';

const USERS = 32;

/**
 * What tracing costs a whole job: the end-to-end load (32 clients, each creating a summarize job
 * and waiting for it) on the run's stack, which does not trace, and on a second stack like it
 * whose API and worker trace every job into a real Jaeger (every span sampled and sent: the
 * HTTP and PostgreSQL spans, the workflow's, the activities', each provider call and swap).
 * Turns alternate, 30 s each, two rounds.
 */
export const tracingScenario: Scenario = {
  name: 'tracing',
  async run({ env, smoke, log }) {
    const turnSeconds = smoke ? 2 : 30;
    const jaeger = await startJaeger({
      binary: await obtainJaeger(log),
      dir: path.join(BENCH_OUTPUT, `jaeger-${process.pid}`),
    });
    const traced = await startBenchStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint },
    });
    try {
      const body = summarizeBody();
      const sides = { off: newJobsMeasurement(), on: newJobsMeasurement() };
      const apiOf = { off: env.stack.apiUrl, on: traced.apiUrl };
      const turn = (name: keyof typeof sides) => () =>
        runJobsFor(
          USERS,
          turnSeconds,
          `tracing-${name}`,
          async (key) => (await runJobThroughApi(apiOf[name], key, body)) === 'succeeded',
          sides[name],
        );
      await interleaved(smoke ? 1 : 2, [{ run: turn('off') }, { run: turn('on') }]);
      const perSecond = (side: JobsMeasurement) => side.completed / side.seconds;
      const [off, on] = [perSecond(sides.off), perSecond(sides.on)];
      log(`tracing: off ${off.toFixed(1)} jobs/s, on ${on.toFixed(1)} jobs/s`);
      const [p99Off, p99On] = [sides.off.latency.ms(99), sides.on.latency.ms(99)];
      return {
        comparisons: [
          {
            row: 'tracing',
            measure: `jobs/s with every job traced to Jaeger, beside tracing off (${USERS} clients)`,
            ours: round2(on),
            baseline: round2(off),
            unit: 'jobs/s',
            ratio: round2(on / off),
            goal: '≥ 0.9× off (costs under 10 %)',
            met: on / off >= 0.9,
          },
          {
            row: 'tracing',
            measure: 'job p99, traced beside tracing off',
            ours: p99On,
            baseline: p99Off,
            unit: 'ms',
            ratio: round2(p99On / p99Off),
            goal: '≤ 1.1× off',
            met: p99On / p99Off <= 1.1,
          },
        ],
        details: Object.fromEntries(
          Object.entries(sides).map(([name, side]) => [
            `tracing ${name}`,
            {
              'jobs succeeded': side.completed,
              'jobs not succeeded': side.failed,
              'jobs/s': round2(perSecond(side)),
              'job p50 ms': side.latency.ms(50),
              'job p99 ms': side.latency.ms(99),
            },
          ]),
        ),
        latencyCurves: Object.entries(sides).map(([series, side]) => ({
          chart: 'whole job, tracing off and on',
          series: `tracing ${series}`,
          points: side.latency.cdf(),
        })),
        rateCurves: Object.entries(sides).map(([series, side]) => ({
          chart: 'jobs completed per second, tracing off and on',
          series: `tracing ${series}`,
          perSecond: side.rate.flatMap((rate) => rate.series()),
        })),
      };
    } finally {
      await traced.stop();
      await jaeger.stop();
    }
  },
};
