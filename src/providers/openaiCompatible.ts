import OpenAI from 'openai';
import {
  causeCode,
  isAmbiguousStatus,
  lateResultTimeoutMs,
  ProviderCallError,
  UNREACHABLE_CODES,
  type OpenAiCompatibleConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
} from './provider';

/** Sorts every failure into "certainly had no effect" or "may have had an effect". */
export function classifyOpenAiError(error: unknown): ProviderCallError {
  if (error instanceof OpenAI.APIUserAbortError) {
    return new ProviderCallError('request aborted after it was sent', 'ambiguous', 'aborted');
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ProviderCallError('provider did not answer in time', 'ambiguous', 'timeout');
  }
  if (error instanceof OpenAI.APIConnectionError) {
    const code = causeCode(error);
    if (code && UNREACHABLE_CODES.has(code)) {
      return new ProviderCallError(`provider unreachable (${code})`, 'definite', 'unreachable');
    }
    return new ProviderCallError(
      `connection failed (${code ?? 'unknown cause'})`,
      'ambiguous',
      'connection',
    );
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    return new ProviderCallError(
      `provider answered HTTP ${status}`,
      isAmbiguousStatus(status) ? 'ambiguous' : 'definite',
      `http_${status}`,
      status,
    );
  }
  return new ProviderCallError(
    `unexpected provider error: ${(error as Error)?.message ?? String(error)}`,
    'ambiguous',
    'unexpected',
  );
}

/** Any OpenAI-compatible chat completions API (OpenAI, Azure, vLLM, Ollama, OpenRouter…). */
export class OpenAiCompatibleProvider implements Provider {
  private readonly client: OpenAI;

  constructor(
    readonly config: OpenAiCompatibleConfig,
    apiKey: string,
  ) {
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      apiKey,
      // A retry is a recorded attempt, never something the SDK does behind our back.
      maxRetries: 0,
      // The attempt times out in the workflow; the request itself may run on to bring a late answer.
      timeout: lateResultTimeoutMs(config),
    });
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    let content: string | null | undefined;
    try {
      const data = await this.client.chat.completions.create(
        {
          model: this.config.model,
          messages: request.contract.prompt(request.input),
          temperature: 0,
          response_format: { type: 'json_object' },
        },
        {
          signal: request.signal,
          headers: { 'Idempotency-Key': request.attemptId, 'X-Request-Id': request.attemptId },
        },
      );
      content = data.choices[0]?.message?.content;
    } catch (error) {
      throw classifyOpenAiError(error);
    }
    if (typeof content !== 'string') {
      throw new ProviderCallError(
        'provider answered without message content',
        'definite',
        'contract_violation',
      );
    }
    try {
      return { output: JSON.parse(content) as unknown };
    } catch {
      throw new ProviderCallError('provider output is not JSON', 'definite', 'contract_violation');
    }
  }
}
