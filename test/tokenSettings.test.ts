import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './harness';

/**
 * A token opens one door only. The API process refuses to start when two owners share a token,
 * or when an owner's token is also an operator's, and says who, never what the token is.
 */
function startApi(
  apiTokens: string,
  operatorTokens?: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'bin', 'api.js')], {
      env: {
        PATH: process.env.PATH,
        // Never reached: the tokens are checked before anything connects.
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        ONEJOB_API_TOKENS: apiTokens,
        ...(operatorTokens === undefined ? {} : { ONEJOB_OPERATOR_TOKENS: operatorTokens }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

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
