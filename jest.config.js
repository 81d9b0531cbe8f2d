/**
 * `npm test` (tools/stack/runTests.ts) runs every test on the dev server, then the engine-sensitive
 * ones on the production engine (ONEJOB_TEMPORAL_ENGINE=cluster: the Temporal server on
 * PostgreSQL). These are the tests whose outcome depends on what the engine accepts
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

const { existsSync } = require('node:fs');
const path = require('node:path');

// A renamed or deleted file must not drop out of the production engine's run unnoticed.
for (const name of ENGINE_SENSITIVE) {
  const file = path.join(__dirname, 'test', `${name}.test.ts`);
  if (!existsSync(file))
    throw new Error(`jest.config.js lists ${name} as engine-sensitive, but ${file} does not exist`);
}

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
  testSequencer: '<rootDir>/test/slowFirstSequencer.js',
  testTimeout: 120_000,
};
