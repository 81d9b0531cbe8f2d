import type { ChatMessage } from '../jobTypes';

export interface ProviderConfig {
  name: string;
  kind: 'openai-compatible';
  /** Base URL of the API, including its version prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** Name of the environment variable holding the API key; the key itself never sits in config. */
  apiKeyEnv?: string;
  /** Attempt timeout: past it the attempt is `unknown`, never `failed`. */
  timeoutMs: number;
  /** True when a call may do something in the world (charge, write) besides answering. */
  sideEffects: boolean;
}

export interface ProviderRequest {
  /** Sent downstream as the idempotency key, so the provider can recognise a repeat. */
  attemptId: string;
  messages: ChatMessage[];
  signal: AbortSignal;
}

export interface ProviderResponse {
  /** The model's text, still unparsed: the contract decides whether it is acceptable. */
  content: string;
  providerRequestId?: string;
}

/**
 * `definite`: the request certainly had no effect (refused before any work), so another
 * attempt elsewhere is safe. `ambiguous`: it may have taken effect, so the attempt is unknown.
 */
export type FailureCertainty = 'definite' | 'ambiguous';

export class ProviderCallError extends Error {
  constructor(
    message: string,
    readonly certainty: FailureCertainty,
    readonly code: string,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'ProviderCallError';
  }
}

export interface Provider {
  readonly config: ProviderConfig;
  call(request: ProviderRequest): Promise<ProviderResponse>;
}
