import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { CpuMeter } from './cpu';
import { CompletionsPerSecond, Latencies } from './latency';
import { round2 } from './scenario';

/** One side of a comparison: what autocannon sends, and the status every answer must have. */
export interface HttpTarget {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** The Idempotency-Key of each request: a fresh one, or one from a pool of existing keys. */
  key?: () => string;
  expectedStatus: number;
}

/** What one side measured over all its rounds. */
export interface HttpMeasurement {
  latency: Latencies;
  requests: number;
  seconds: number;
  /** Answers with another status than expected, errors and timeouts: each one a defect to explain. */
  unexpected: Record<string, number>;
  /** CPU seconds each process used during this side's turns (when a meter was given). */
  cpuSeconds: Record<string, number>;
}

export function newMeasurement(): HttpMeasurement {
  return { latency: new Latencies(), requests: 0, seconds: 0, unexpected: {}, cpuSeconds: {} };
}

export const freshKey = (prefix: string) => () => `${prefix}-${randomUUID()}`;

/** Runs autocannon against one target for a while, adding what it saw to `into`. */
export async function hammer(
  target: HttpTarget,
  connections: number,
  seconds: number,
  into: HttpMeasurement,
  meter?: CpuMeter,
): Promise<void> {
  const cpuBefore = meter?.read();
  const started = Date.now();
  let finished!: (error: unknown, sent?: number) => void;
  const done = new Promise<number>((resolve, reject) => {
    finished = (error, sent) => (error ? reject(error as Error) : resolve(sent ?? 0));
  });
  const instance = autocannon(
    {
      url: target.url,
      connections,
      duration: seconds,
      timeout: 30,
      requests: [
        {
          method: target.method,
          headers: target.headers,
          ...(target.body === undefined ? {} : { body: target.body }),
          ...(target.key
            ? {
                setupRequest: (request) => ({
                  ...request,
                  headers: { ...request.headers, 'idempotency-key': target.key!() },
                }),
              }
            : {}),
        },
      ],
    },
    (error, result) => finished(error, result?.requests.sent),
  );
  const unexpected = (what: string, times = 1): void => {
    into.unexpected[what] = (into.unexpected[what] ?? 0) + times;
  };
  // Every request sent ends in an answer, an error (a timeout, a refused connection), or is cut
  // off by the run's end: at most one in flight per connection then.
  let ended = 0;
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    ended += 1;
    into.requests += 1;
    into.latency.recordMs(responseTime);
    if (statusCode !== target.expectedStatus) unexpected(String(statusCode));
  });
  instance.on('reqError', (error: unknown) => {
    ended += 1;
    unexpected(`error: ${(error as Error).message}`);
  });
  const sent = await done;
  // A connection the server closed with a request on it is one autocannon quietly opens again:
  // no answer, no error event. Only the count of requests sent shows such a request.
  const unanswered = sent - ended - connections;
  if (unanswered > 0) unexpected('no answer (connection closed)', unanswered);
  into.seconds += (Date.now() - started) / 1000;
  if (meter && cpuBefore) {
    for (const [part, seconds] of Object.entries(CpuMeter.used(cpuBefore, meter.read())))
      into.cpuSeconds[part] = (into.cpuSeconds[part] ?? 0) + seconds;
  }
}

/**
 * Ours and the baseline, round after round, taking turns (and which goes first alternates), so
 * the noise of a shared machine falls on both alike.
 */
export async function interleaved(
  rounds: number,
  sides: Array<{ run: () => Promise<void>; between?: () => Promise<void> }>,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      await side.run();
      await side.between?.();
    }
  }
}

/** CPU milliseconds per request, by process, over a side's turns. */
export function cpuMsPerRequest(measurement: HttpMeasurement): Record<string, number> {
  return Object.fromEntries(
    Object.entries(measurement.cpuSeconds).map(([part, seconds]) => [
      part,
      Math.round(((seconds * 1000) / Math.max(1, measurement.requests)) * 100) / 100,
    ]),
  );
}

export function requestsPerSecond(measurement: HttpMeasurement): number {
  return measurement.requests / measurement.seconds;
}

/** What the report's details say of one side of an HTTP row. */
export function httpSummary(measurement: HttpMeasurement): Record<string, unknown> {
  return {
    requests: measurement.requests,
    'p50 ms': measurement.latency.ms(50),
    'p99 ms': measurement.latency.ms(99),
    'req/s': round2(requestsPerSecond(measurement)),
    unexpected: measurement.unexpected,
    'CPU ms per request, by process': cpuMsPerRequest(measurement),
  };
}

/** What one side of a whole-job comparison measured over all its turns. */
export interface JobsMeasurement {
  latency: Latencies;
  completed: number;
  failed: number;
  seconds: number;
  /** Completions per second, one series per turn. */
  rate: CompletionsPerSecond[];
  /** The key of every job it ran, in the order they ended. */
  keys: string[];
}

export function newJobsMeasurement(): JobsMeasurement {
  return { latency: new Latencies(), completed: 0, failed: 0, seconds: 0, rate: [], keys: [] };
}

/**
 * A closed loop of whole jobs for `seconds`: `users` clients each run one job (`runOne` says
 * whether it succeeded; a throw counts as not), then the next, adding what they saw to `into`.
 */
export async function runJobsFor(
  users: number,
  seconds: number,
  prefix: string,
  runOne: (key: string) => Promise<boolean>,
  into: JobsMeasurement,
): Promise<void> {
  const started = Date.now();
  const rate = new CompletionsPerSecond(started);
  into.rate.push(rate);
  await Promise.all(
    Array.from({ length: users }, async () => {
      while (Date.now() - started < seconds * 1000) {
        const key = `${prefix}-${randomUUID()}`;
        const t0 = performance.now();
        const ok = await runOne(key).catch(() => false);
        into.latency.recordMs(performance.now() - t0);
        rate.record();
        into.keys.push(key);
        if (ok) into.completed += 1;
        else into.failed += 1;
      }
    }),
  );
  into.seconds += (Date.now() - started) / 1000;
}
