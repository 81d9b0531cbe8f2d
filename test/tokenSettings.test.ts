import { startServiceUntilExit } from './support/serviceProcesses';

/**
 * A service started from these settings fails closed. The API process refuses to start when two
 * owners share a token, or when an owner's token is also an operator's, and says who, never what
 * the token is. Outside the dev stack (`npm start`), the API and the worker refuse the published
 * dev secrets and a missing provider list, each in one line naming the variable.
 */

/** The API with these tokens and the simulator named on purpose (so providers pass). */
const startApi = (apiTokens: string, operatorTokens?: string) =>
  startServiceUntilExit('api', {
    ONEJOB_API_TOKENS: apiTokens,
    ONEJOB_SIMULATOR_URL: 'http://127.0.0.1:1',
    ...(operatorTokens === undefined ? {} : { ONEJOB_OPERATOR_TOKENS: operatorTokens }),
  });

const SHARED = 'shared-secret-token-42';

test.each([
  [
    'two owners with the same token',
    `alice:${SHARED},bob:${SHARED}`,
    undefined,
    /ONEJOB_API_TOKENS: alice and bob have the same token/,
  ],
  [
    'two operators with the same token',
    'alice:alice-token-0001',
    `ops-1:${SHARED},ops-2:${SHARED}`,
    /ONEJOB_OPERATOR_TOKENS: ops-1 and ops-2 have the same token/,
  ],
  [
    'an owner token that is also an operator token',
    `alice:alice-token-0001,bob:${SHARED}`,
    `ops-1:ops-token-0001,ops-2:${SHARED}`,
    /share tokens \(owner bob and operator ops-2\)/,
  ],
  [
    'one owner listed twice with the same token',
    `alice:${SHARED},alice:${SHARED}`,
    undefined,
    /alice is listed twice with the same token/,
  ],
])('%s: the API refuses to start, naming them', async (_name, apiTokens, operators, message) => {
  const { code, output } = await startApi(apiTokens, operators);
  expect({ code, output }).toEqual({ code: 1, output: expect.stringMatching(message) });
  // One clear line, and the secret is nowhere in it.
  expect(output.trim().split('\n')).toHaveLength(1);
  expect(output).not.toContain(SHARED);
});

test('distinct tokens pass the check (the process goes on to connect, and fails there)', async () => {
  const { code, output } = await startApi(
    'alice:alice-token-0001,bob:bob-token-0002',
    'ops-1:ops-token-0001',
  );
  expect(code).toBe(1);
  expect(output).not.toMatch(/same token|share tokens/);
  expect(output).toMatch(/onejob api: /);
});

const OWN_TOKENS = 'alice:alice-token-0001';
const SIMULATOR_ON_PURPOSE = { ONEJOB_SIMULATOR_URL: 'http://127.0.0.1:1' };

test.each([
  ['api', { ONEJOB_API_TOKENS: OWN_TOKENS }],
  ['worker', {}],
  ['worker', { ONEJOB_PROVIDERS: '[]' }],
] as const)(
  'outside npm start, the %s refuses to start without providers, in one line (%j)',
  async (name, env) => {
    const { code, output } = await startServiceUntilExit(name, env);
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(/^onejob \w+: ONEJOB_PROVIDERS (is not set|is invalid)/),
    ]);
  },
);

test.each([
  ['api', 'ONEJOB_API_TOKENS', { ONEJOB_API_TOKENS: 'dev:onejob-dev-token' }],
  [
    'api',
    'ONEJOB_OPERATOR_TOKENS',
    { ONEJOB_API_TOKENS: OWN_TOKENS, ONEJOB_OPERATOR_TOKENS: 'ops:onejob-dev-operator-token' },
  ],
  [
    'api',
    'ONEJOB_METRICS_TOKEN',
    { ONEJOB_API_TOKENS: OWN_TOKENS, ONEJOB_METRICS_TOKEN: 'onejob-dev-metrics-token' },
  ],
  [
    'worker',
    'ONEJOB_SIMULATOR_CALLBACK_SECRET',
    { ONEJOB_SIMULATOR_CALLBACK_SECRET: 'onejob-dev-callback-secret' },
  ],
] as const)(
  'outside npm start, the %s refuses a published dev secret in %s, in one line naming it',
  async (name, variable, env) => {
    const { code, output } = await startServiceUntilExit(name, { ...SIMULATOR_ON_PURPOSE, ...env });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      `onejob ${name}: ${variable} holds one of onejob's published dev secrets, which only npm start may use; choose your own`,
    ]);
  },
);

test('the dev stack (npm start marks its processes) may use the published dev token and the default simulator', async () => {
  const { code, output } = await startServiceUntilExit('api', {
    ONEJOB_DEV_STACK: '1',
    ONEJOB_API_TOKENS: 'dev:onejob-dev-token',
  });
  // It passes every check and fails only where it connects.
  expect(code).toBe(1);
  expect(output).not.toMatch(/published dev secrets|ONEJOB_PROVIDERS/);
  expect(output).toMatch(/onejob api: /);
});
