import { z } from 'zod';
import { DEFAULTS } from '../domain/defaults';
import type { ProviderKind } from '../domain/providerKind';
import { startedByDevStack } from '../domain/publishedSecrets';
import { AnthropicProvider } from './anthropic';
import { providerConfigSchema } from './configSchema';
import { HttpProvider } from './httpProvider';
import { OpenAiCompatibleProvider } from './openaiCompatible';
import type {
  Provider,
  ProviderConfig,
  ProviderRequest,
  ProviderResponse,
  ProviderTokenCount,
  StatusLookup,
} from './provider';
import { SecretRedactor } from './redaction';
import type { ReplayLookup } from './replay';

export const DEFAULT_SIMULATOR_URL = `http://127.0.0.1:${DEFAULTS.simulatorPort}`;

/** The simulator's providers: two chat models (a primary and a fallback) and the payment API. */
export function simulatorProviders(simulatorUrl: string): ProviderConfig[] {
  const base = simulatorUrl.replace(/\/$/, '');
  return [
    {
      name: 'simulator',
      kind: 'openai-compatible',
      baseUrl: `${base}/v1`,
      model: 'sim-steady',
      timeoutMs: 30_000,
      sideEffects: false,
      // The simulator's invented prices, per million tokens.
      price: { currency: 'USD', inputPerMillion: 0.15, outputPerMillion: 0.6 },
    },
    {
      name: 'simulator-backup',
      kind: 'openai-compatible',
      baseUrl: `${base}/v1`,
      model: 'sim-backup',
      timeoutMs: 30_000,
      sideEffects: false,
      price: { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 },
    },
    {
      name: 'simulator-pay',
      kind: 'http',
      url: `${base}/v1/charges`,
      statusUrl: `${base}/v1/charges/by-key/{key}`,
      timeoutMs: 30_000,
      sideEffects: true,
      callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET',
    },
  ];
}

/** Parses and checks a JSON array of provider configs. */
export function parseProviderConfigs(json: string, source = 'ONEJOB_PROVIDERS'): ProviderConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error(`${source} is not valid JSON`);
  }
  const parsed = z.array(providerConfigSchema).min(1).safeParse(raw);
  if (!parsed.success) throw new Error(`${source} is invalid: ${z.prettifyError(parsed.error)}`);
  const shared = sharedCallbackSecret(parsed.data, {});
  if (shared) throw new Error(`${source} is invalid: ${shared}`);
  return parsed.data;
}

/**
 * Why two providers' callbacks would not be told apart: they name the same secret variable, or
 * their variables hold the same secret (a callback signed for one would pass as the other's).
 * Names the providers and variables, never the secret.
 */
export function sharedCallbackSecret(
  configs: readonly ProviderConfig[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  const withSecret = configs.filter((c) => c.callbackSecretEnv);
  for (const [i, a] of withSecret.entries()) {
    for (const b of withSecret.slice(i + 1)) {
      if (a.callbackSecretEnv === b.callbackSecretEnv)
        return `providers ${a.name} and ${b.name} name the same callback secret variable ${a.callbackSecretEnv}; each provider needs a secret of its own`;
      const secretA = env[a.callbackSecretEnv!];
      if (secretA && secretA === env[b.callbackSecretEnv!])
        return `providers ${a.name} and ${b.name} have the same callback secret (${a.callbackSecretEnv} and ${b.callbackSecretEnv}); each provider needs a secret of its own`;
    }
  }
  return undefined;
}

/**
 * Provider configuration: `ONEJOB_PROVIDERS` (a JSON array) when set, else the simulator at
 * `ONEJOB_SIMULATOR_URL` when that is set on purpose. With neither, only a process of the dev
 * stack gets the simulator on its default address; anything else refuses to start, so that no
 * deployment sends its jobs to whatever listens on 127.0.0.1:4010 and calls that a charge.
 */
export function providerConfigsFromEnv(env: NodeJS.ProcessEnv = process.env): ProviderConfig[] {
  if (env.ONEJOB_PROVIDERS) return parseProviderConfigs(env.ONEJOB_PROVIDERS);
  if (env.ONEJOB_SIMULATOR_URL) return simulatorProviders(env.ONEJOB_SIMULATOR_URL);
  if (startedByDevStack(env)) return simulatorProviders(DEFAULT_SIMULATOR_URL);
  throw new Error(
    'ONEJOB_PROVIDERS is not set: name the providers to call (docs/providers.md), or set ONEJOB_SIMULATOR_URL to use the provider simulator on purpose',
  );
}

function createProvider(config: ProviderConfig, apiKey: string | undefined): Provider {
  switch (config.kind) {
    case 'http':
      return new HttpProvider(config, apiKey);
    case 'anthropic':
      return new AnthropicProvider(config, apiKey ?? 'not-needed');
    case 'openai-compatible':
      return new OpenAiCompatibleProvider(config, apiKey ?? 'not-needed');
  }
}

/**
 * A provider whose errors and status details never carry a configured secret or a credential,
 * whoever reads them: the attempt's stored error, the logs, certification's verdicts.
 */
class RedactingProvider implements Provider {
  constructor(
    private readonly inner: Provider,
    private readonly redactor: SecretRedactor,
  ) {}

  get config(): ProviderConfig {
    return this.inner.config;
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    try {
      return await this.inner.call(request);
    } catch (error) {
      throw this.redactor.error(error);
    }
  }

  get countTokens(): ((request: ProviderRequest) => Promise<ProviderTokenCount>) | undefined {
    const count = this.inner.countTokens?.bind(this.inner);
    if (!count) return undefined;
    return (request) =>
      count(request).catch((error: unknown) => {
        throw this.redactor.error(error);
      });
  }

  get lookupStatus(): ((attemptId: string) => Promise<StatusLookup>) | undefined {
    const lookup = this.inner.lookupStatus?.bind(this.inner);
    if (!lookup) return undefined;
    return async (attemptId) => {
      const status = await lookup(attemptId);
      return status.state === 'unknown'
        ? { ...status, detail: this.redactor.text(status.detail) }
        : status;
    };
  }

  get replay(): ReplayLookup | undefined {
    const inner = this.inner.replay;
    if (!inner) return undefined;
    return {
      window: inner.window,
      bytesOf: (input) => inner.bytesOf(input),
      send: async (attemptId, body, withinMs) => {
        try {
          return await inner.send(attemptId, body, withinMs);
        } catch (error) {
          throw this.redactor.error(error);
        }
      },
    };
  }
}

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  constructor(
    configs: ProviderConfig[],
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    const shared = sharedCallbackSecret(configs, env);
    if (shared) throw new Error(shared);
    // Every secret a provider is configured with, masked wherever a provider's words are kept.
    const redactor = new SecretRedactor(
      configs.flatMap((c) => [c.apiKeyEnv, c.callbackSecretEnv].map((name) => name && env[name])),
    );
    for (const config of configs) {
      if (this.providers.has(config.name))
        throw new Error(`provider ${config.name} is configured twice`);
      const apiKey = config.apiKeyEnv ? env[config.apiKeyEnv] : undefined;
      if (config.apiKeyEnv && !apiKey)
        throw new Error(
          `provider ${config.name}: environment variable ${config.apiKeyEnv} is not set`,
        );
      this.providers.set(
        config.name,
        new RedactingProvider(createProvider(config, apiKey), redactor),
      );
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

  /** Providers that can serve a job of these provider kinds, in configuration order. */
  compatible(kinds: readonly ProviderKind[]): string[] {
    return [...this.providers.values()]
      .filter((p) => kinds.includes(p.config.kind))
      .map((p) => p.config.name);
  }

  /** The HMAC secret for a provider's callbacks, if it has one configured. */
  callbackSecret(name: string): string | undefined {
    const envName = this.providers.get(name)?.config.callbackSecretEnv;
    return envName ? this.env[envName] : undefined;
  }
}
