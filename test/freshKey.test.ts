import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { isValidIdempotencyKey } from '../src/domain/identity';
import { ROOT } from './support/harness';

/**
 * The tests' keys (test/support/jobs.ts freshKey) name jobs, and through them workflow ids: two
 * Jest workers that made the same key would meet in one job. Each process below has its clock
 * stopped at the same millisecond, the case time and a per-process count cannot tell apart.
 */
function keysOfAProcess(count: number): string[] {
  const script = [
    'Date.now = () => 1767225600000;',
    `const { freshKey } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'jobs.ts'))});`,
    `console.log(JSON.stringify(Array.from({ length: ${count} }, () => freshKey('same-prefix'))));`,
  ].join('\n');
  const output = execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '--eval', script],
    { encoding: 'utf8' },
  );
  return JSON.parse(output) as string[];
}

test('keys made by two processes in the same millisecond all differ, and each is a valid idempotency key', () => {
  const keys = [...keysOfAProcess(3), ...keysOfAProcess(3)];
  expect(new Set(keys).size).toBe(keys.length);
  for (const key of keys) expect(isValidIdempotencyKey(key)).toBe(true);
});
