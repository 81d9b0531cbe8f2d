/**
 * How long the exploring tests explore. `npm test` runs them short (every kind of check, each
 * planted bug caught, in minutes); `npm run test:long` sets ONEJOB_TEST_LENGTH=long and runs the
 * same checks at full length: the fault campaign, the model-based runs and the HTTP fuzzer.
 */
export const TEST_LENGTH_VARIABLE = 'ONEJOB_TEST_LENGTH';

export type TestLength = 'short' | 'long';

export function testLength(): TestLength {
  const value = process.env[TEST_LENGTH_VARIABLE];
  if (value === undefined || value === '' || value === 'short') return 'short';
  if (value === 'long') return 'long';
  throw new Error(`${TEST_LENGTH_VARIABLE} must be short or long, not ${JSON.stringify(value)}`);
}

/** The value for this run's length. */
export function byLength<T>(lengths: Record<TestLength, T>): T {
  return lengths[testLength()];
}
