import OpenAI from 'openai';
import {
  ProviderCallError,
  type Provider,
  type ProviderConfig,
  type ProviderRequest,
  type ProviderResponse,
} from './provider';

const CONNECTION_REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

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
    if (code && CONNECTION_REFUSED_CODES.has(code)) {
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
    // 408 and 5xx leave open whether the work was done; other 4xx refuse before doing it.
    const ambiguous = status === 408 || status >= 500;
    return new ProviderCallError(
      `provider answered HTTP ${status}`,
      ambiguous ? 'ambiguous' : 'definite',
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
    readonly config: ProviderConfig,
    apiKey: string,
  ) {
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      apiKey,
      // A retry is a recorded attempt, never something the SDK does behind our back.
      maxRetries: 0,
      timeout: config.timeoutMs,
    });
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    try {
      const { data, response } = await this.client.chat.completions
        .create(
          {
            model: this.config.model,
            messages: request.messages,
            temperature: 0,
            response_format: { type: 'json_object' },
          },
          {
            signal: request.signal,
            headers: { 'Idempotency-Key': request.attemptId, 'X-Request-Id': request.attemptId },
          },
        )
        .withResponse();
      const content = data.choices[0]?.message?.content;
      if (typeof content !== 'string') {
        throw new ProviderCallError(
          'provider answered without message content',
          'definite',
          'empty_output',
        );
      }
      return { content, providerRequestId: response.headers.get('x-request-id') ?? data.id };
    } catch (error) {
      if (error instanceof ProviderCallError) throw error;
      throw classifyOpenAiError(error);
    }
  }
}
