import OpenAI from 'openai';
import { outputJsonSchema } from '../jobTypes';
import { cappedFetch } from './boundedBody';
import {
  ContractViolation,
  lateResultTimeoutMs,
  maxResponseBytes,
  temperatureOf,
  type OpenAiCompatibleConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
  type TokenUsage,
  outputTokenCap,
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
      // The answer is read only up to the provider's cap, never buffered past it.
      fetch: cappedFetch(maxResponseBytes(config)),
    });
  }

  private responseFormat(request: ProviderRequest) {
    // Free text asks for no format: the model answers in prose, as the API does by default.
    if (request.contract.answer === 'text') return {};
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

  /** The request body: the model, the prompt, the asked format, the cap and the temperature. */
  requestBody(request: ProviderRequest): OpenAI.ChatCompletionCreateParamsNonStreaming {
    const temperature = temperatureOf(this.config);
    const cap = request.maxOutputTokens ?? outputTokenCap(this.config);
    return {
      model: this.config.model,
      messages: request.contract.prompt(request.input),
      ...(temperature === undefined ? {} : { temperature }),
      [this.config.maxTokensParameter ?? 'max_completion_tokens']: cap,
      ...this.responseFormat(request),
    };
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    const body = this.requestBody(request);
    let data: OpenAI.ChatCompletion;
    try {
      data = await this.client.chat.completions.create(body, {
        signal: request.signal,
        headers: { 'Idempotency-Key': request.attemptId, 'X-Request-Id': request.attemptId },
      });
    } catch (error) {
      throw classifyOpenAiError(error);
    }
    const usage: TokenUsage | undefined = data.usage && {
      // OpenAI's prompt tokens include the cached ones, which it also reports apart.
      inputTokens: data.usage.prompt_tokens,
      ...(data.usage.prompt_tokens_details?.cached_tokens == null
        ? {}
        : { cachedInputTokens: data.usage.prompt_tokens_details.cached_tokens }),
      outputTokens: data.usage.completion_tokens,
    };
    const choice = data.choices[0];
    const content = choice?.message?.content;
    // The stop reason first: a cut-off or refused answer is that, whatever its text looks like.
    const refusal = choice?.message?.refusal;
    if (typeof refusal === 'string' && refusal.length > 0)
      throw new ContractViolation(`the model refused: ${refusal}`, refusal, 'refused', usage);
    if (choice?.finish_reason === 'content_filter')
      throw new ContractViolation(
        "the provider's content filter stopped the answer",
        content ?? null,
        'refused',
        usage,
      );
    if (choice?.finish_reason === 'length') {
      const cap = body.max_completion_tokens ?? body.max_tokens;
      throw new ContractViolation(
        `the answer was cut off at the output cap (finish_reason "length", ${cap} tokens)`,
        content ?? null,
        'truncated',
        usage,
      );
    }
    if (typeof content !== 'string' || content.trim().length === 0)
      throw new ContractViolation(
        'the answer has no message content',
        content ?? null,
        'no_content',
        usage,
      );
    if (request.contract.answer === 'text')
      return { output: { text: content }, ...(usage ? { usage } : {}) };
    try {
      return { output: JSON.parse(content) as unknown, ...(usage ? { usage } : {}) };
    } catch {
      throw new ContractViolation(
        'the answer is not JSON (the model ignored the format)',
        content,
        'format_ignored',
        usage,
      );
    }
  }
}
