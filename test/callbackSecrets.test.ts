import type { ProviderConfig } from '../src/providers/provider';
import { parseProviderConfigs, ProviderRegistry } from '../src/providers/registry';
import { payProvider } from './support/providers';
import { startServiceUntilExit } from './support/serviceProcesses';

/**
 * Each provider's callback secret is its own: a callback signed with one provider's secret
 * could otherwise be posted as another's. Two providers naming the same variable, or variables
 * holding the same secret, are refused at start, naming both providers and never the secret.
 */

const SHARED = 'shared-callback-secret-42';
const URL = 'http://127.0.0.1:1';

const two = (envA: string, envB: string): ProviderConfig[] => [
  payProvider(URL, 'pay-a', { callbackSecretEnv: envA }),
  payProvider(URL, 'pay-b', { callbackSecretEnv: envB }),
];

describe('the configuration is refused', () => {
  test('two providers naming the same callback secret variable are refused when parsed', () => {
    expect(() => parseProviderConfigs(JSON.stringify(two('PAY_SECRET', 'PAY_SECRET')))).toThrow(
      /providers pay-a and pay-b name the same callback secret variable PAY_SECRET/,
    );
  });

  test('two providers naming the same callback secret variable are refused by the registry', () => {
    expect(
      () => new ProviderRegistry(two('PAY_SECRET', 'PAY_SECRET'), { PAY_SECRET: SHARED }),
    ).toThrow(/providers pay-a and pay-b name the same callback secret variable PAY_SECRET/);
  });

  test('two providers whose callback secret variables hold the same secret are refused, without saying it', () => {
    let message = '';
    try {
      new ProviderRegistry(two('PAY_A_SECRET', 'PAY_B_SECRET'), {
        PAY_A_SECRET: SHARED,
        PAY_B_SECRET: SHARED,
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/providers pay-a and pay-b have the same callback secret/);
    expect(message).not.toContain(SHARED);
    expect(message.split('\n')).toHaveLength(1);
  });

  test('distinct callback secrets are accepted', () => {
    const registry = new ProviderRegistry(two('PAY_A_SECRET', 'PAY_B_SECRET'), {
      PAY_A_SECRET: 'secret-a-0001',
      PAY_B_SECRET: 'secret-b-0002',
    });
    expect(registry.callbackSecret('pay-a')).toBe('secret-a-0001');
    expect(registry.callbackSecret('pay-b')).toBe('secret-b-0002');
  });
});

const startApi = (env: Record<string, string>) =>
  startServiceUntilExit('api', { ONEJOB_API_TOKENS: 'alice:alice-token-0001', ...env });

test.each([
  [
    'the same variable',
    two('PAY_SECRET', 'PAY_SECRET'),
    { PAY_SECRET: SHARED },
    /providers pay-a and pay-b name the same callback secret variable PAY_SECRET/,
  ],
  [
    'variables holding the same secret',
    two('PAY_A_SECRET', 'PAY_B_SECRET'),
    { PAY_A_SECRET: SHARED, PAY_B_SECRET: SHARED },
    /providers pay-a and pay-b have the same callback secret/,
  ],
])(
  'two providers with %s: the API refuses to start in one line naming both',
  async (_name, configs, secrets, message) => {
    const { code, output } = await startApi({
      ONEJOB_PROVIDERS: JSON.stringify(configs),
      ...secrets,
    });
    expect({ code, output }).toEqual({ code: 1, output: expect.stringMatching(message) });
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(output).not.toContain(SHARED);
  },
);
