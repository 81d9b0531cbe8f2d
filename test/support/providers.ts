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
 *
 * A call that should answer has an attempt timeout no healthy call reaches, however loaded the
 * machine (test files run side by side on two cores): only a fault makes an attempt time out.
 * Its late-result window is longer still, so a slow answer is never cut off either.
 */

/** The attempt timeout of a provider whose calls must answer: only a fault reaches it. */
export const ANSWERS_WITHIN_MS = 10_000;

/**
 * For a call a test's fault (hang, hold, delay) must carry past its timeout: pass it as
 * `timeoutMs` on the providers whose attempts the test wants to become `unknown`.
 */
export const TIMES_OUT_SOON_MS = 1_000;

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
    timeoutMs: ANSWERS_WITHIN_MS,
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
    timeoutMs: ANSWERS_WITHIN_MS,
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
    timeoutMs: ANSWERS_WITHIN_MS,
    lateResultTimeoutMs: 20_000,
    sideEffects: false,
    retry: false,
    breaker: false,
    ...options,
  };
}
