/**
 * How many tokens a prompt takes with a provider's tokenizer, and the window it must fit: counted
 * by the provider's own endpoint where it has one, else (or when that fails) estimated here.
 */
import type { Tiktoken } from 'js-tiktoken' with { 'resolution-mode': 'import' };
import type { AnyJobTypeContract } from '../jobTypes';
import type { Provider, ProviderRequest } from './provider';

// js-tiktoken ships CommonJS for require(), but its type declarations are ESM-only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getEncoding } = require('js-tiktoken') as typeof import('js-tiktoken', {
  with: { 'resolution-mode': 'import' },
});
const encodings = new Map<string, Tiktoken>();

/** A prompt's count and what it is: `counted by <endpoint>`, or an estimate and why. */
export interface PromptCount {
  tokens: number | null;
  /** Said in the report: `counted by POST /v1/messages/count_tokens`, `estimate: …`. */
  countedBy: string;
  /** True unless the provider's own tokenizer counted it. */
  estimate: boolean;
}

/**
 * The prompt's tokens as the provider counts them (its count endpoint, config `tokenCount`), the
 * very request the call sends; without such an endpoint, or when it fails, the local estimate,
 * labelled so and with the endpoint's failure.
 */
export async function countPromptTokens(
  provider: Provider,
  request: Pick<ProviderRequest, 'contract' | 'input'>,
): Promise<PromptCount> {
  const local = localPromptTokens(provider, request.contract, request.input);
  if (!provider.countTokens || local.tokens === null)
    return { tokens: local.tokens, countedBy: local.tokenizer, estimate: true };
  try {
    const counted = await provider.countTokens({
      attemptId: 'token-count',
      ...request,
      signal: AbortSignal.timeout(provider.config.timeoutMs),
    });
    return { tokens: counted.tokens, countedBy: `counted by ${counted.endpoint}`, estimate: false };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      tokens: local.tokens,
      countedBy: `${local.tokenizer}; the provider's count failed: ${why}`,
      estimate: true,
    };
  }
}

/**
 * Prompt tokens counted here: js-tiktoken for OpenAI-compatible models; for
 * Anthropic models (whose tokenizer is not published) an estimate of one token per 3.5
 * characters, which over-counts English slightly; HTTP providers have no prompt.
 */
export function localPromptTokens(
  provider: Provider,
  contract: AnyJobTypeContract,
  input: unknown,
): { tokens: number | null; tokenizer: string } {
  const { config } = provider;
  if (config.kind === 'http') return { tokens: null, tokenizer: 'n/a (no prompt)' };
  const messages = contract.prompt(input);
  if (config.kind === 'anthropic') {
    const chars = messages.reduce((sum, m) => sum + m.content.length, 0);
    return {
      tokens: Math.ceil(chars / 3.5) + 8 * messages.length,
      tokenizer: 'estimate: chars / 3.5',
    };
  }
  const name = config.tokenizer ?? 'o200k_base';
  let encoding = encodings.get(name);
  if (!encoding) {
    encoding = getEncoding(name);
    encodings.set(name, encoding);
  }
  // Each chat message costs a few tokens of framing on top of its content.
  const tokens = messages.reduce((sum, m) => sum + encoding.encode(m.content).length + 4, 3);
  return { tokens, tokenizer: `estimate: js-tiktoken ${name}` };
}

/** The context window assumed when the config does not say: conservative per kind. */
export function contextWindowOf(provider: Provider): number | null {
  const { config } = provider;
  if (config.kind === 'http') return null;
  return config.contextWindow ?? (config.kind === 'anthropic' ? 200_000 : 128_000);
}
