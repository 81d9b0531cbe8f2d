/**
 * `npm test` (tools/stack/runTests.ts) runs every test on the dev server but those in
 * test/engines/, which run on the production engine (ONEJOB_TEMPORAL_ENGINE=cluster: the Temporal
 * server on PostgreSQL); the dev server runs them too when it is the only engine asked for, and in
 * `npm run test:long`. test/engines/ holds the tests whose outcome depends on what the engine
 * accepts and how it behaves: ids and their limits, update-with-start, child workflows,
 * visibility and search attributes, histories, crashes and restarts.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch:
    process.env.ONEJOB_TEMPORAL_ENGINE === 'cluster'
      ? ['**/test/engines/*.test.ts']
      : ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/support/setupEachFile.ts'],
  testSequencer: '<rootDir>/test/support/slowFirstSequencer.js',
  testTimeout: 120_000,
};
