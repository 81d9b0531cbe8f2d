import { randomUUID } from 'node:crypto';
import {
  httpSummary,
  requestsPerSecond,
  hammer,
  interleaved,
  newMeasurement,
  type HttpTarget,
} from '../support/load';
import { drainJobs, jsonHeaders, summarizeBody } from '../support/ours';
import { round2, type Comparison, type Scenario } from '../support/scenario';

const CLIENTS = 64;

/**
 * `POST /v1/jobs` again with a key and body we have seen (the existing job answers, nothing
 * starts) against the baseline's `POST /replay` (bearer check and one primary-key SELECT), at
 * 64 connections, on keys drawn at random from a few hundred finished jobs.
 */
export const replayScenario: Scenario = {
  name: 'replay',
  async run({ env, smoke, log }) {
    const count = smoke ? 20 : 300;
    const body = summarizeBody();
    const oursKeys = Array.from({ length: count }, () => `replay-${randomUUID()}`);
    const baselineKeys = oursKeys.map((key) => `baseline-${key}`);
    for (const [url, keys] of [
      [`${env.stack.apiUrl}/v1/jobs`, oursKeys],
      [`${env.baseline.url}/create`, baselineKeys],
    ] as const) {
      for (const key of keys) {
        const answer = await fetch(url, {
          method: 'POST',
          headers: { ...jsonHeaders(), 'idempotency-key': key },
          body,
        });
        if (answer.status !== 201)
          throw new Error(`seeding a replay key answered ${answer.status}`);
      }
    }
    await drainJobs(env.stack.pool, 'replay-');
    log(`replay: ${count} finished jobs on each side`);
    const pick = (keys: string[]) => () => keys[Math.floor(Math.random() * keys.length)]!;
    const ours: HttpTarget = {
      url: `${env.stack.apiUrl}/v1/jobs`,
      method: 'POST',
      headers: jsonHeaders(),
      body,
      key: pick(oursKeys),
      expectedStatus: 200,
    };
    const baseline: HttpTarget = {
      ...ours,
      url: `${env.baseline.url}/replay`,
      key: pick(baselineKeys),
    };
    const measured = { ours: newMeasurement(), baseline: newMeasurement() };
    const seconds = smoke ? 1 : 5;
    await interleaved(smoke ? 1 : 3, [
      { run: () => hammer(ours, CLIENTS, seconds, measured.ours, env.cpu) },
      { run: () => hammer(baseline, CLIENTS, seconds, measured.baseline, env.cpu) },
    ]);
    const [o, b] = [requestsPerSecond(measured.ours), requestsPerSecond(measured.baseline)];
    const p99 = measured.ours.latency.ms(99);
    return {
      comparisons: [
        {
          row: 'replay',
          measure: `throughput at ${CLIENTS} connections`,
          ours: round2(o),
          baseline: round2(b),
          unit: 'req/s',
          ratio: round2(o / b),
          goal: '≥ 0.8× baseline',
          met: o / b >= 0.8,
        },
        {
          row: 'replay',
          measure: `p99 at ${CLIENTS} connections`,
          ours: p99,
          baseline: measured.baseline.latency.ms(99),
          unit: 'ms',
          ratio: round2(p99 / measured.baseline.latency.ms(99)),
          goal: 'ours ≤ 10 ms',
          met: p99 <= 10,
        },
      ] satisfies Comparison[],
      details: Object.fromEntries(
        Object.entries(measured).map(([series, m]) => [series, httpSummary(m)]),
      ),
      latencyCurves: Object.entries(measured).map(([series, m]) => ({
        chart: `replay, ${CLIENTS} connections`,
        series,
        points: m.latency.cdf(),
      })),
    };
  },
};
