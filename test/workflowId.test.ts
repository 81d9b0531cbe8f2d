import { createHash, randomInt } from 'node:crypto';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_OWNER_ID_LENGTH } from '../src/domain/identity';
import {
  idempotencyKeyDigest,
  jobWorkflowId,
  MAX_WORKFLOW_ID_LENGTH,
  parseJobWorkflowId,
} from '../src/domain/workflowId';

const printable = (n: number): string =>
  Array.from({ length: n }, () => String.fromCharCode(randomInt(0x20, 0x7f))).join('');

test('separator tricks in owners and keys never make two identities share a workflow id', () => {
  const pairs: Array<[string, string]> = [
    ['a:b', 'c'],
    ['a', 'b:c'],
    ['a/b', 'c'],
    ['a', 'b/c'],
    ['a%2Fb', 'c'],
    ['a', '%2Fc'],
    ['org/team', 'key'],
    ['org', 'team/key'],
    ['a b', 'c'],
    ['a', ' b c'],
    // Long enough for the digest form: the owner still separates them.
    ['a/b', 'k'.repeat(255)],
    ['a', `b/${'k'.repeat(253)}`],
  ];
  const ids = pairs.map(([owner, key]) => jobWorkflowId(owner, key));
  expect(new Set(ids).size).toBe(pairs.length);
});

test('the workflow id stays readable while it fits and decodes back to the same owner and key', () => {
  expect(jobWorkflowId('alice@example.com', 'order-42')).toBe('job/alice@example.com/order-42');
  expect(jobWorkflowId('org/team', 'a/b%c')).toBe('job/org%2Fteam/a%2Fb%25c');
  // The longest readable id is exactly the limit; one character more takes the digest form.
  const fits = 'k'.repeat(MAX_WORKFLOW_ID_LENGTH - 'job/o/'.length);
  expect(jobWorkflowId('o', fits)).toBe(`job/o/${fits}`);
  expect(jobWorkflowId('o', `${fits}k`)).toMatch(/^job-sha256\/o\//);
  for (let i = 0; i < 2000; i++) {
    const owner = printable(randomInt(1, MAX_OWNER_ID_LENGTH + 1));
    const key = printable(randomInt(1, MAX_IDEMPOTENCY_KEY_LENGTH + 1));
    const parsed = parseJobWorkflowId(jobWorkflowId(owner, key));
    expect(parsed.ownerId).toBe(owner);
    if (parsed.form === 'readable') expect(parsed.idempotencyKey).toBe(key);
    else expect(parsed.idempotencyKeyDigest).toBe(idempotencyKeyDigest(key));
  }
});

test('every owner and key the API accepts yields a workflow id within the engine limit of 255', () => {
  const worst: Array<[string, string]> = [
    ['/'.repeat(MAX_OWNER_ID_LENGTH), '%'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH)],
    ['o', 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH)],
    ['%'.repeat(MAX_OWNER_ID_LENGTH), 'k'],
    ['/'.repeat(MAX_OWNER_ID_LENGTH), '/'.repeat(10)],
  ];
  for (const [owner, key] of worst) {
    expect(jobWorkflowId(owner, key).length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
  }
  for (let i = 0; i < 2000; i++) {
    const id = jobWorkflowId(
      printable(randomInt(1, MAX_OWNER_ID_LENGTH + 1)),
      printable(randomInt(1, MAX_IDEMPOTENCY_KEY_LENGTH + 1)),
    );
    // Printable ASCII only, so characters and UTF-8 bytes agree.
    expect(Buffer.byteLength(id)).toBe(id.length);
    expect(id.length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
  }
});

test('the digest form uses SHA-256 of the key, so keys that differ anywhere get different ids', () => {
  const key = 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH);
  const expected = createHash('sha256').update(key).digest('base64url');
  expect(idempotencyKeyDigest(key)).toBe(expected);
  expect(jobWorkflowId('o', key)).toBe(`job-sha256/o/${expected}`);
  // Keys that share a long prefix (which a truncating scheme would merge) stay apart.
  const ids = new Set(
    Array.from({ length: 50 }, (_, i) => jobWorkflowId('o', `${'p'.repeat(240)}${i}`)),
  );
  expect(ids.size).toBe(50);
});

test('a key’s later generations (after a release) get ids of their own, apart from every first generation’s, within 255 and decoding back', () => {
  expect(jobWorkflowId('alice', 'order-42', 2)).toBe('job/alice/order-42/2');
  expect(jobWorkflowId('alice', 'order-42', 1)).toBe(jobWorkflowId('alice', 'order-42'));
  const ids = new Set<string>();
  for (const [owner, key] of [
    ['a', 'b'],
    ['a', 'b/2'],
    ['a/b', '2'],
    ['a', 'b%2F2'],
  ] as const)
    for (const generation of [1, 2, 3, 12]) ids.add(jobWorkflowId(owner, key, generation));
  expect(ids.size).toBe(16);
  for (const generation of [2, 9_999_999]) {
    for (let i = 0; i < 500; i++) {
      const owner = printable(randomInt(1, MAX_OWNER_ID_LENGTH + 1));
      const key = printable(randomInt(1, MAX_IDEMPOTENCY_KEY_LENGTH + 1));
      const id = jobWorkflowId(owner, key, generation);
      expect(id.length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
      const parsed = parseJobWorkflowId(id);
      expect([parsed.ownerId, parsed.generation]).toEqual([owner, generation]);
      if (parsed.form === 'readable') expect(parsed.idempotencyKey).toBe(key);
    }
  }
  const worst = jobWorkflowId('/'.repeat(MAX_OWNER_ID_LENGTH), 'k', 9_999_999);
  expect(worst.length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
  expect(() => jobWorkflowId('a', 'b', 0)).toThrow(RangeError);
  expect(() => parseJobWorkflowId('job/a/b/1')).toThrow(RangeError);
  expect(() => parseJobWorkflowId('job/a/b/x')).toThrow(RangeError);
});
