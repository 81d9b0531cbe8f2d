import fc from 'fast-check';
import { startTestStack, type TestStack } from './helpers';

/**
 * Properties over random keys and payloads, through the real API process and PostgreSQL:
 * a burst of identical creates is always one job; a burst of different payloads under one key
 * is always exactly one 201 and a 409 for every other payload.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

// HTTP strips leading and trailing spaces from header values (RFC 9110 §5.5), so a key that
// ends in a space cannot arrive as sent; the client refuses such keys, and so does this generator.
const printableKey = fc
  .string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 80,
  })
  .filter((key) => key.trim() === key);
const text = fc.string({ minLength: 2, maxLength: 200 }).filter((t) => t.trim().length > 0);

let run = 0;
function uniqueKey(key: string): string {
  // Each property run needs a fresh key; the random part stays in it (up to 255 characters).
  return `${++run}|${key}`;
}

function post(key: string, body: unknown): Promise<Response> {
  return stack.request('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
}

test('a concurrent burst of identical requests always yields one job', async () => {
  await fc.assert(
    fc.asyncProperty(
      printableKey,
      text,
      fc.integer({ min: 2, max: 8 }),
      async (rawKey, body, copies) => {
        const key = uniqueKey(rawKey);
        const responses = await Promise.all(
          Array.from({ length: copies }, () =>
            post(key, { type: 'summarize', input: { text: body } }),
          ),
        );
        const statuses = responses.map((r) => r.status).sort();
        const ids = new Set(
          await Promise.all(responses.map(async (r) => ((await r.json()) as { id: string }).id)),
        );
        expect(statuses).toEqual([...Array(copies - 1).fill(200), 201]);
        expect(ids.size).toBe(1);
        const { rows } = await stack.pool.query(
          'SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = $1',
          [key],
        );
        expect(rows[0].n).toBe(1);
      },
    ),
    { numRuns: 25 },
  );
});

test('different payloads under one key: exactly one 201, every other payload 409', async () => {
  await fc.assert(
    fc.asyncProperty(
      printableKey,
      fc.uniqueArray(text, { minLength: 2, maxLength: 6 }),
      async (rawKey, bodies) => {
        const key = uniqueKey(rawKey);
        const responses = await Promise.all(
          bodies.map((body) => post(key, { type: 'summarize', input: { text: body } })),
        );
        const statuses = responses.map((r) => r.status);
        expect(statuses.filter((s) => s === 201)).toHaveLength(1);
        expect(statuses.filter((s) => s === 409)).toHaveLength(bodies.length - 1);
        const winner = bodies[statuses.indexOf(201)];
        const { rows } = await stack.pool.query(
          'SELECT input FROM jobs WHERE idempotency_key = $1',
          [key],
        );
        expect(rows).toEqual([{ input: { text: winner } }]);
      },
    ),
    { numRuns: 25 },
  );
});
