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

/**
 * The seed of an exploring test's random choices, and where it came from (the test prints both):
 * `variable` when set, to replay a run; else in `npm test` the fixed `fixed`, so that a red run
 * is the change's doing and a rerun sees the same; else (`npm run test:long`) a new one each
 * run, so that the nightly runs go on exploring.
 */
export function explorationSeed(variable: string, fixed: number): { seed: number; origin: string } {
  const value = process.env[variable];
  if (value !== undefined && value !== '') {
    const seed = Number(value);
    if (!Number.isSafeInteger(seed))
      throw new Error(`${variable} must be an integer, not ${JSON.stringify(value)}`);
    return { seed, origin: `from ${variable}` };
  }
  return testLength() === 'short'
    ? { seed: fixed, origin: 'fixed for npm test' }
    : { seed: Math.floor(Math.random() * 2 ** 31), origin: 'drawn for this run' };
}
