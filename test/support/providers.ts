import type {
  AnthropicConfig,
  HttpProviderConfig,
  OpenAiCompatibleConfig,
  ProviderConfig,
} from '../../src/providers/provider';

/*
 * Retries on the same provider and the circuit breaker are off unless a test turns them on
 * (`retry: {…}`, `breaker: {…}`): the tests of fallbacks, certainty and races pin what one failed
 * call leads to, and provoke many failures on one provider; providerRetries and providerHealth
 * pin retries, cooldowns and the breaker.
 */

/** A payment-like provider on the simulator, with its status lookup unless told otherwise. */
export function payProvider(
  url: string,
  name: string,
  options: Partial<HttpProviderConfig> = {},
): ProviderConfig {
  return {
    name,
    kind: 'http',
    url: `${url}/v1/charges`,
    statusUrl: `${url}/v1/charges/by-key/{key}`,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 20_000,
    sideEffects: true,
    retry: false,
    breaker: false,
    ...options,
  };
}

/** An OpenAI-compatible chat provider on the simulator, serving one of its models. */
export function chatProvider(
  url: string,
  name: string,
  model: string,
  options: Partial<OpenAiCompatibleConfig> = {},
): ProviderConfig {
  return {
    name,
    kind: 'openai-compatible',
    baseUrl: `${url}/v1`,
    model,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 20_000,
    sideEffects: false,
    retry: false,
    breaker: false,
    ...options,
  };
}

/** An Anthropic Messages provider on the simulator, serving one of its models. */
export function anthropicProvider(
  url: string,
  name: string,
  model: string,
  options: Partial<AnthropicConfig> = {},
): ProviderConfig {
  return {
    name,
    kind: 'anthropic',
    baseUrl: url,
    model,
    timeoutMs: 1_000,
    lateResultTimeoutMs: 3_000,
    sideEffects: false,
    retry: false,
    breaker: false,
    ...options,
  };
}
