/** How many tokens a prompt takes with a provider's tokenizer, and the window it must fit. */
import type { Tiktoken } from 'js-tiktoken' with { 'resolution-mode': 'import' };
import type { AnyJobTypeContract } from '../jobTypes';
import type { Provider } from '../providers/provider';

// js-tiktoken ships CommonJS for require(), but its type declarations are ESM-only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getEncoding } = require('js-tiktoken') as typeof import('js-tiktoken', {
  with: { 'resolution-mode': 'import' },
});
const encodings = new Map<string, Tiktoken>();

/**
 * Prompt tokens with the provider's tokenizer: js-tiktoken for OpenAI-compatible models; for
 * Anthropic models (whose tokenizer is not published) an estimate of one token per 3.5
 * characters, which over-counts English slightly; HTTP providers have no prompt.
 */
export function countPromptTokens(
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
      tokenizer: 'estimate (chars / 3.5)',
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
  return { tokens, tokenizer: `js-tiktoken ${name}` };
}

/** The context window assumed when the config does not say: conservative per kind. */
export function contextWindowOf(provider: Provider): number | null {
  const { config } = provider;
  if (config.kind === 'http') return null;
  return config.contextWindow ?? (config.kind === 'anthropic' ? 200_000 : 128_000);
}
