import { randomInt } from 'node:crypto';
import { jobWorkflowId, parseJobWorkflowId } from '../src/domain/workflowId';

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
  ];
  const ids = pairs.map(([owner, key]) => jobWorkflowId(owner, key));
  expect(new Set(ids).size).toBe(pairs.length);
});

test('the workflow id stays readable and decodes back to the same owner and key', () => {
  expect(jobWorkflowId('alice@example.com', 'order-42')).toBe('job/alice@example.com/order-42');
  expect(jobWorkflowId('org/team', 'a/b%c')).toBe('job/org%2Fteam/a%2Fb%25c');
  for (let i = 0; i < 2000; i++) {
    const printable = (n: number): string =>
      Array.from({ length: n }, () => String.fromCharCode(randomInt(0x20, 0x7f))).join('');
    const owner = printable(randomInt(1, 65));
    const key = printable(randomInt(1, 256));
    const id = jobWorkflowId(owner, key);
    expect(parseJobWorkflowId(id)).toEqual({ ownerId: owner, idempotencyKey: key });
    // Temporal's default limit on workflow id length is 1000 bytes.
    expect(Buffer.byteLength(id)).toBeLessThanOrEqual(1000);
  }
});

test('the longest owner and key made only of escaped characters still fit in 1000 bytes', () => {
  expect(Buffer.byteLength(jobWorkflowId('/'.repeat(64), '%'.repeat(255)))).toBeLessThanOrEqual(
    1000,
  );
});
