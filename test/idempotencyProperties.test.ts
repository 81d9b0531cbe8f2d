import fc from 'fast-check';
import { useTestStack } from './support/stack';

/**
 * Properties over random keys and payloads, through the real API process and PostgreSQL, at full
 * size: keys up to the 255-character limit, texts over all of Unicode (astral planes, combining
 * marks, control characters, NUL). A burst of identical creates is always one job; a burst of
 * different payloads under one key is exactly one 201 and a 409 for every other payload; the same
 * intent written differently (key order, whitespace) is a replay of the same job.
 */
const stack = useTestStack({ certify: [['simulator-backup', 'summarize']] });

const MAX_KEY = 255;
const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
// HTTP strips leading and trailing spaces from header values (RFC 9110 §5.5), so a key that
// ends in a space cannot arrive as sent; the client refuses such keys, and so does this generator.
const printableKey = fc
  .string({ unit: printable, minLength: 1, maxLength: MAX_KEY, size: 'max' })
  .filter((key) => key.trim() === key);
// Any code point of any plane (fast-check's 'binary' unit), up to a few thousand of them; all but
// U+0000, which PostgreSQL cannot store and the API refuses (pinned below).
const text = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 4_000, size: 'max' })
  .map((t) => t.replaceAll('\u0000', '\u0001'))
  .filter((t) => t.trim().length > 0);

let run = 0;
/** Each property run needs a fresh key: a counter in front, the random part kept up to 255. */
function uniqueKey(key: string): string {
  const prefix = `${++run}|`;
  const fitted = `${prefix}${key}`.slice(0, MAX_KEY);
  return fitted.trimEnd() === fitted ? fitted : `${fitted.slice(0, -1)}x`;
}

function post(key: string, body: unknown): Promise<Response> {
  return stack.request('POST', '/v1/jobs', { body, headers: { 'idempotency-key': key } });
}

async function rowsWithKey(key: string): Promise<Array<{ id: string; input: unknown }>> {
  const { rows } = await stack.pool.query('SELECT id, input FROM jobs WHERE idempotency_key = $1', [
    key,
  ]);
  return rows;
}

test('a concurrent burst of identical requests always yields one job, whatever the key and text', async () => {
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
        // The text is kept exactly as sent, every code point of it.
        expect(await rowsWithKey(key)).toEqual([{ id: [...ids][0], input: { text: body } }]);
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
        expect((await rowsWithKey(key)).map((row) => row.input)).toEqual([{ text: winner }]);
      },
    ),
    { numRuns: 25 },
  );
});

/** JSON text of `value` with each object's keys in a shuffled order and whitespace between tokens. */
function written(value: unknown, order: () => number, space: () => string): string {
  if (Array.isArray(value))
    return `[${space()}${value.map((v) => written(v, order, space)).join(`${space()},${space()}`)}${space()}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort(() => order() - 0.5);
    const members = keys.map(
      (k) =>
        `${JSON.stringify(k)}${space()}:${space()}${written((value as Record<string, unknown>)[k], order, space)}`,
    );
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
  }
  return JSON.stringify(value);
}

/** A deterministic stream of numbers in [0, 1) from a seed fast-check chose. */
function stream(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

test('the same intent with its keys reordered and its whitespace changed is a 200 replay of the same job', async () => {
  // Hedged mode needs two providers; a plan of one runs exclusive (given or by default).
  const planAndMode = fc.constantFrom(
    {},
    { mode: 'exclusive' },
    { providers: ['simulator'] },
    { providers: ['simulator', 'simulator-backup'], mode: 'exclusive' },
    { providers: ['simulator-backup', 'simulator'], mode: 'hedged' },
  );
  const intent = fc
    .tuple(fc.record({ type: fc.constant('summarize'), input: fc.record({ text }) }), planAndMode)
    .map(([core, rest]) => ({ ...core, ...rest }));
  await fc.assert(
    fc.asyncProperty(printableKey, intent, fc.integer(), async (rawKey, body, seed) => {
      const key = uniqueKey(rawKey);
      const first = await post(key, body);
      expect(first.status).toBe(201);
      const { id } = (await first.json()) as { id: string };

      const next = stream(seed);
      const blanks = [' ', '\n', '\t', '\r\n', '', '  '];
      const again = written(body, next, () => blanks[Math.floor(next() * blanks.length)]!);
      const replay = await post(key, again);
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(((await replay.json()) as { id: string }).id).toBe(id);
      expect(await rowsWithKey(key)).toHaveLength(1);
    }),
    { numRuns: 25 },
  );
});

describe('the key length boundary', () => {
  const body = { type: 'summarize', input: { text: 'At the edge of the key length.' } };

  test.each([
    ['255 characters is accepted', MAX_KEY, 201],
    ['256 characters is refused and writes nothing', MAX_KEY + 1, 400],
  ])('%s', async (_title, length, status) => {
    const key = `${'k'.repeat(length - 8)}${String(++run).padStart(8, '0')}`;
    expect(key).toHaveLength(length);
    const response = await post(key, body);
    expect(response.status).toBe(status);
    if (status === 400) {
      expect(await response.json()).toMatchObject({ type: '/problems/idempotency-key-invalid' });
      expect(await rowsWithKey(key)).toEqual([]);
    } else {
      const { id } = (await response.json()) as { id: string };
      expect(await rowsWithKey(key)).toEqual([{ id, input: body.input }]);
    }
  });
});

test('an input holding U+0000, which PostgreSQL cannot store, is refused as invalid and writes nothing', async () => {
  await fc.assert(
    fc.asyncProperty(printableKey, text, text, async (rawKey, before, after) => {
      const key = uniqueKey(rawKey);
      const response = await post(key, {
        type: 'summarize',
        input: { text: `${before}\u0000${after}` },
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        type: '/problems/invalid-input',
        errors: [{ path: 'input.text', message: expect.stringMatching(/U\+0000/) }],
      });
      expect(await rowsWithKey(key)).toEqual([]);
    }),
    { numRuns: 10 },
  );
});
