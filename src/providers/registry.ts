import { z } from 'zod';
import { OpenAiCompatibleProvider } from './openaiCompatible';
import type { Provider, ProviderConfig } from './provider';

const providerConfigSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'provider names are lowercase [a-z0-9._-]'),
  kind: z.literal('openai-compatible'),
  baseUrl: z.url(),
  model: z.string().min(1),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/)
    .optional(),
  timeoutMs: z.number().int().min(100).max(3_600_000),
  sideEffects: z.boolean(),
});

export const DEFAULT_SIMULATOR_URL = 'http://127.0.0.1:4010';

/**
 * Provider configuration: `ONEJOB_PROVIDERS` (a JSON array) when set, else the simulator at
 * `ONEJOB_SIMULATOR_URL`, which is what the offline stack and the tests talk to.
 */
export function providerConfigsFromEnv(env: NodeJS.ProcessEnv = process.env): ProviderConfig[] {
  if (env.ONEJOB_PROVIDERS) {
    let raw: unknown;
    try {
      raw = JSON.parse(env.ONEJOB_PROVIDERS);
    } catch {
      throw new Error('ONEJOB_PROVIDERS is not valid JSON');
    }
    const parsed = z.array(providerConfigSchema).min(1).safeParse(raw);
    if (!parsed.success)
      throw new Error(`ONEJOB_PROVIDERS is invalid: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }
  const simulatorUrl = env.ONEJOB_SIMULATOR_URL ?? DEFAULT_SIMULATOR_URL;
  return [
    {
      name: 'simulator',
      kind: 'openai-compatible',
      baseUrl: `${simulatorUrl.replace(/\/$/, '')}/v1`,
      model: 'sim-steady',
      timeoutMs: 30_000,
      sideEffects: false,
    },
  ];
}

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(configs: ProviderConfig[], env: NodeJS.ProcessEnv = process.env) {
    for (const config of configs) {
      if (this.providers.has(config.name))
        throw new Error(`provider ${config.name} is configured twice`);
      const apiKey = config.apiKeyEnv ? env[config.apiKeyEnv] : 'not-needed';
      if (!apiKey)
        throw new Error(
          `provider ${config.name}: environment variable ${config.apiKeyEnv} is not set`,
        );
      this.providers.set(config.name, new OpenAiCompatibleProvider(config, apiKey));
    }
  }

  names(): string[] {
    return [...this.providers.keys()];
  }

  get(name: string): Provider {
    const provider = this.providers.get(name);
    if (!provider) throw new Error(`unknown provider ${name}`);
    return provider;
  }

  has(name: string): boolean {
    return this.providers.has(name);
  }

  /** The plan a job gets when it names no providers. */
  defaultPlan(): string[] {
    return this.names().slice(0, 1);
  }
}
