/**
 * `npm test` runs the suite twice (src/dev/runTests.ts): every test on the dev server, then the
 * engine-sensitive ones on the production engine (ONEJOB_TEMPORAL_ENGINE=cluster: the Temporal
 * server on PostgreSQL). These are the tests whose outcome depends on what the engine accepts
 * and how it behaves: ids and their limits, update-with-start, child workflows, visibility and
 * search attributes, histories, crashes and restarts.
 */
const ENGINE_SENSITIVE = [
  'idempotentCreation',
  'temporalNative',
  'childWorkflow',
  'attempts',
  'unknownSettlement',
  'hedging',
  'replay',
  'searchAttributes',
  'webUi',
  'workerCrash',
  'temporalCancel',
  'continueAsNew',
  'temporalRestart',
  'abandonedCallHeartbeats',
  'workflowStartRefusal',
];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch:
    process.env.ONEJOB_TEMPORAL_ENGINE === 'cluster'
      ? ENGINE_SENSITIVE.map((name) => `**/test/${name}.test.ts`)
      : ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  globalSetup: '<rootDir>/test/globalSetup.ts',
  globalTeardown: '<rootDir>/test/globalTeardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/setupEachFile.ts'],
  testTimeout: 120_000,
};
