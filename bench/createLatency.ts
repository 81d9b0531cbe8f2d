/**
 * Latency of POST /v1/jobs through the real API process, PostgreSQL and Temporal: a new create
 * (insert + workflow start) against a replay (same key and body: the existing job, and the
 * workflow start answered by USE_EXISTING / already-started). Prints a table.
 *
 *   npm run bench            (BENCH_N=<requests per row>, default 300)
 */
import { randomUUID } from 'node:crypto';
import globalSetup from '../test/globalSetup';
import globalTeardown from '../test/globalTeardown';
import { startTestStack, type TestStack } from '../test/support/stack';

const N = Number(process.env.BENCH_N ?? 300);
const CONCURRENCY = 16;

function percentile(sorted: number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

async function timed(send: () => Promise<Response>, expected: number): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await send();
  await response.arrayBuffer();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (response.status !== expected) throw new Error(`expected ${expected}, got ${response.status}`);
  return ms;
}

interface Row {
  operation: string;
  requests: number;
  concurrency: number;
  medianMs: number;
  p99Ms: number;
  throughputPerS: number;
}

async function measure(
  operation: string,
  keys: string[],
  concurrency: number,
  send: (key: string) => Promise<Response>,
  expected: number,
): Promise<Row> {
  const latencies: number[] = [];
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        latencies.push(await timed(() => send(key), expected));
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    operation,
    requests: keys.length,
    concurrency,
    medianMs: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    throughputPerS: keys.length / elapsed,
  };
}

async function main(): Promise<void> {
  process.env.LOG_LEVEL ??= 'warn';
  await globalSetup();
  let stack: TestStack | undefined;
  try {
    // The worker in its own process, so running workflows do not share the client's event loop.
    stack = await startTestStack({ workerProcess: true });
    const running = stack;
    const body = (key: string) => ({
      type: 'summarize',
      input: { text: `Benchmark job ${key}. It is short.` },
    });
    const create = (key: string) =>
      running.request('POST', '/v1/jobs', { body: body(key), headers: { 'idempotency-key': key } });
    const keys = (prefix: string, n: number) =>
      Array.from({ length: n }, () => `${prefix}-${randomUUID()}`);

    await measure('warm-up', keys('warm', 30), 1, create, 201);
    const sequential = keys('seq', N);
    const concurrent = keys('par', N);
    // Replays are measured once the created jobs have run, so both rows see a quiet machine.
    const settle = async (batch: string[]): Promise<void> => {
      const deadline = Date.now() + 300_000;
      while (Date.now() < deadline) {
        const { rows } = await running.pool.query(
          `SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = ANY($1) AND terminal_status IS NOT NULL`,
          [batch],
        );
        if (rows[0].n === batch.length) return;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error('the created jobs did not finish within 5 minutes');
    };
    const rows: Row[] = [];
    for (const [batch, concurrency] of [
      [sequential, 1],
      [concurrent, CONCURRENCY],
    ] as const) {
      rows.push(await measure('create (new key)', batch, concurrency, create, 201));
      await settle(batch);
      rows.push(await measure('replay (same key, same body)', batch, concurrency, create, 200));
    }
    console.log(
      `\nPOST /v1/jobs latency — ${N} requests per row, API as its own process, local PostgreSQL, Temporal dev server\n`,
    );
    console.table(
      rows.map((row) => ({
        operation: row.operation,
        requests: row.requests,
        concurrency: row.concurrency,
        'median ms': row.medianMs.toFixed(2),
        'p99 ms': row.p99Ms.toFixed(2),
        'req/s': row.throughputPerS.toFixed(0),
      })),
    );
  } finally {
    await stack?.stop();
    await globalTeardown();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
