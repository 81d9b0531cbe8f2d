import {
  httpSummary,
  requestsPerSecond,
  freshKey,
  hammer,
  interleaved,
  newMeasurement,
  type HttpTarget,
} from '../support/load';
import { drainJobs, jsonHeaders, summarizeBody } from '../support/ours';
import { round2, type Comparison, type LatencyCurve, type Scenario } from '../support/scenario';

/**
 * `POST /v1/jobs` with a new key (insert, admission, workflow start, through the API process)
 * against the baseline's `POST /create` (validate, one INSERT, start an empty workflow), at 1,
 * 16 and 64 clients. Between turns our jobs are run to the end, so neither side meets the
 * other's backlog.
 */
export const createScenario: Scenario = {
  name: 'create',
  async run({ env, smoke, log }) {
    const comparisons: Comparison[] = [];
    const latencyCurves: LatencyCurve[] = [];
    const details: Record<string, unknown> = {};
    const seconds = smoke ? 1 : 5;
    for (const clients of smoke ? [1, 16] : [1, 16, 64]) {
      const prefix = `create-${clients}`;
      const ours: HttpTarget = {
        url: `${env.stack.apiUrl}/v1/jobs`,
        method: 'POST',
        headers: jsonHeaders(),
        body: summarizeBody(),
        key: freshKey(prefix),
        expectedStatus: 201,
      };
      const baseline: HttpTarget = {
        ...ours,
        url: `${env.baseline.url}/create`,
        key: freshKey(`baseline-${prefix}`),
      };
      const measured = { ours: newMeasurement(), baseline: newMeasurement() };
      await interleaved(smoke ? 1 : 3, [
        {
          run: () => hammer(ours, clients, seconds, measured.ours, env.cpu),
          between: () => drainJobs(env.stack.pool, prefix),
        },
        { run: () => hammer(baseline, clients, seconds, measured.baseline, env.cpu) },
      ]);
      log(
        `create at ${clients} clients: ours p50 ${measured.ours.latency.ms(50)} ms, baseline ${measured.baseline.latency.ms(50)} ms`,
      );
      if (clients === 1) {
        const [o, b] = [measured.ours.latency.ms(50), measured.baseline.latency.ms(50)];
        comparisons.push({
          row: 'create',
          measure: 'p50 at 1 client',
          ours: o,
          baseline: b,
          unit: 'ms',
          ratio: round2(o / b),
          goal: '≤ 1.5× baseline',
          met: o / b <= 1.5,
        });
      } else {
        const [o, b] = [requestsPerSecond(measured.ours), requestsPerSecond(measured.baseline)];
        comparisons.push({
          row: 'create',
          measure: `throughput at ${clients} clients`,
          ours: round2(o),
          baseline: round2(b),
          unit: 'req/s',
          ratio: round2(o / b),
          goal: '≥ 0.8× baseline',
          met: o / b >= 0.8,
        });
      }
      for (const [series, m] of Object.entries(measured)) {
        latencyCurves.push({
          chart: `create, ${clients} clients`,
          series,
          points: m.latency.cdf(),
        });
        details[`${series} at ${clients} clients`] = httpSummary(m);
      }
    }
    return { comparisons, details, latencyCurves };
  },
};
