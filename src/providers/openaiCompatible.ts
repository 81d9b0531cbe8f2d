import OpenAI from 'openai';
import { outputJsonSchema } from '../jobTypes';
import {
  ContractViolation,
  lateResultTimeoutMs,
  type OpenAiCompatibleConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
} from './provider';
import { classifySdkError } from './sdkErrors';

export const classifyOpenAiError = (error: unknown) => classifySdkError(error, OpenAI);

/** Any OpenAI-compatible chat completions API (OpenAI, Azure, vLLM, Ollama, OpenRouter, Together, Groq…). */
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

  private responseFormat(request: ProviderRequest) {
    switch (this.config.structuredOutput ?? 'json_schema') {
      case 'json_schema':
        return {
          response_format: {
            type: 'json_schema' as const,
            json_schema: {
              name: request.contract.name,
              strict: true,
              schema: outputJsonSchema(request.contract),
            },
          },
        };
      case 'json_object':
        return { response_format: { type: 'json_object' as const } };
      default:
        return {};
    }
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    let content: string | null | undefined;
    try {
      const data = await this.client.chat.completions.create(
        {
          model: this.config.model,
          messages: request.contract.prompt(request.input),
          temperature: 0,
          max_completion_tokens: this.config.maxOutputTokens ?? 1024,
          ...this.responseFormat(request),
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
    if (typeof content !== 'string')
      throw new ContractViolation('the answer has no message content', content ?? null);
    try {
      return { output: JSON.parse(content) as unknown };
    } catch {
      throw new ContractViolation('the answer is not JSON (the model ignored the format)', content);
    }
  }
}
