import { randomUUID } from 'node:crypto';
import { Latencies } from '../support/latency';
import {
  freshKey,
  hammer,
  httpSummary,
  newMeasurement,
  type HttpMeasurement,
  type HttpTarget,
} from '../support/load';
import { drainJobs, jsonHeaders, summarizeBody } from '../support/ours';
import { round2, type Scenario } from '../support/scenario';

const COPIES = 64;
const LOAD_CLIENTS = 16;

interface Burst {
  latency: Latencies;
  /** Answers by status. */
  statuses: Record<string, number>;
  /** Bursts whose answers were not what they must be: each one a defect to explain. */
  unexpected: Record<string, number>;
}

const newBurst = (): Burst => ({ latency: new Latencies(), statuses: {}, unexpected: {} });

/**
 * COPIES identical creates sent at once on `key`; each one's time to its answer. On a new key
 * exactly one is `201` and the others `200`; on an existing key all are `200`.
 */
async function fireBurst(
  apiUrl: string,
  key: string,
  body: string,
  into: Burst,
  keyIsNew: boolean,
): Promise<void> {
  const seen: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: COPIES }, async () => {
      const started = performance.now();
      let status: string;
      try {
        const answer = await fetch(`${apiUrl}/v1/jobs`, {
          method: 'POST',
          headers: { ...jsonHeaders(), 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(30_000),
        });
        await answer.arrayBuffer();
        status = String(answer.status);
      } catch (error) {
        status = `error: ${(error as Error).message}`;
      }
      into.latency.recordMs(performance.now() - started);
      seen[status] = (seen[status] ?? 0) + 1;
    }),
  );
  for (const [status, n] of Object.entries(seen))
    into.statuses[status] = (into.statuses[status] ?? 0) + n;
  const created = seen['201'] ?? 0;
  const replayed = seen['200'] ?? 0;
  const right = created === (keyIsNew ? 1 : 0) && created + replayed === COPIES;
  if (!right) {
    const what = `${keyIsNew ? 'new' : 'existing'} key answered ${JSON.stringify(seen)}`;
    into.unexpected[what] = (into.unexpected[what] ?? 0) + 1;
  }
}

/**
 * A storm of duplicates: COPIES identical creates at once on a key nobody has used (a
 * double-click times 64, a client's retries after a timeout), beside the same burst on a key
 * whose job exists (plain replays), on an idle stack and while LOAD_CLIENTS clients create
 * other jobs. The storm should cost what replays cost: its creator starts the workflow, the
 * others answer from the row (the start lease).
 */
export const duplicatesScenario: Scenario = {
  name: 'duplicates',
  async run({ env, smoke, log }) {
    const rounds = smoke ? 2 : 10;
    const body = summarizeBody();
    const apiUrl = env.stack.apiUrl;
    const prefix = `dup-${randomUUID().slice(0, 8)}`;
    const storm = newBurst();
    const replays = newBurst();
    const stormUnderLoad = newBurst();
    const load: HttpMeasurement = newMeasurement();

    for (let round = 0; round < rounds; round++) {
      const key = `${prefix}-idle-${round}`;
      await fireBurst(apiUrl, key, body, storm, true);
      await drainJobs(env.stack.pool, key);
      await fireBurst(apiUrl, key, body, replays, false);
    }
    log(
      `duplicates: idle storm p99 ${storm.latency.ms(99)} ms, replays p99 ${replays.latency.ms(99)} ms`,
    );

    // Under load: the other clients create for the whole time the storms run.
    const loadSeconds = smoke ? 3 : 20;
    const target: HttpTarget = {
      url: `${apiUrl}/v1/jobs`,
      method: 'POST',
      headers: jsonHeaders(),
      body,
      key: freshKey(`${prefix}-load`),
      expectedStatus: 201,
    };
    const loading = hammer(target, LOAD_CLIENTS, loadSeconds, load, env.cpu);
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await pause(1_000);
    const stormsUnderLoad = smoke ? 1 : 8;
    for (let round = 0; round < stormsUnderLoad; round++) {
      await fireBurst(apiUrl, `${prefix}-busy-${round}`, body, stormUnderLoad, true);
      await pause(1_000);
    }
    await loading;
    await drainJobs(env.stack.pool, prefix);
    log(
      `duplicates under load: storm p99 ${stormUnderLoad.latency.ms(99)} ms, a create p50 ${load.latency.ms(50)} ms`,
    );

    const idleRatio = storm.latency.ms(99) / replays.latency.ms(99);
    const busyRatio = stormUnderLoad.latency.ms(99) / load.latency.ms(50);
    const summary = (burst: Burst) => ({
      requests: burst.latency.count,
      'p50 ms': burst.latency.ms(50),
      'p99 ms': burst.latency.ms(99),
      statuses: burst.statuses,
      unexpected: burst.unexpected,
    });
    return {
      comparisons: [
        {
          row: 'duplicates',
          measure: `p99 of ${COPIES} identical creates on a new key, vs ${COPIES} replays of an existing key`,
          ours: storm.latency.ms(99),
          baseline: replays.latency.ms(99),
          unit: 'ms',
          ratio: round2(idleRatio),
          goal: '≤ 2× replays',
          met: idleRatio <= 2,
        },
        {
          row: 'duplicates',
          measure: `p99 of that storm while ${LOAD_CLIENTS} clients create, vs their create p50`,
          ours: stormUnderLoad.latency.ms(99),
          baseline: load.latency.ms(50),
          unit: 'ms',
          ratio: round2(busyRatio),
          goal: '≤ 3× one create',
          met: busyRatio <= 3,
        },
      ],
      details: {
        'storm, idle': summary(storm),
        'replays of an existing key': summary(replays),
        'storm, under load': summary(stormUnderLoad),
        [`the ${LOAD_CLIENTS} creating clients`]: httpSummary(load),
      },
      latencyCurves: [
        { chart: 'duplicates', series: 'storm, idle', points: storm.latency.cdf() },
        { chart: 'duplicates', series: 'replays', points: replays.latency.cdf() },
        { chart: 'duplicates', series: 'storm, under load', points: stormUnderLoad.latency.cdf() },
      ],
    };
  },
};
