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
  type ProviderTokenCount,
  type TokenUsage,
  outputTokenCap,
} from './provider';
import { classifySdkError } from './sdkErrors';

export const classifyOpenAiError = (error: unknown) => classifySdkError(error, OpenAI);

/** Any OpenAI-compatible chat completions API (OpenAI, Azure, vLLM, Ollama, OpenRouter, Together, Groq…). */
export class OpenAiCompatibleProvider implements Provider {
  private readonly client: OpenAI;
  /** The server's own count of a prompt, when the config names the endpoint (`tokenCount`). */
  readonly countTokens?: (request: ProviderRequest) => Promise<ProviderTokenCount>;

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
    if (config.tokenCount === 'tokenize') this.countTokens = (r) => this.countByTokenize(r);
    if (config.tokenCount === 'input_tokens') this.countTokens = (r) => this.countByInputTokens(r);
  }

  /**
   * vLLM's `POST /tokenize`, served beside `/v1`: the messages through the model's chat template,
   * as the chat call renders them; it answers `{count, max_model_len, tokens}`.
   */
  private async countByTokenize(request: ProviderRequest): Promise<ProviderTokenCount> {
    const url = `${this.config.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/tokenize`;
    const { model, messages } = this.requestBody(request);
    try {
      const { count } = await this.client.post<{ count?: unknown }>(url, {
        body: { model, messages },
        signal: request.signal ?? null,
      });
      if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0)
        throw new Error(`POST /tokenize answered no count`);
      return { tokens: count, endpoint: 'POST /tokenize' };
    } catch (error) {
      throw classifyOpenAiError(error);
    }
  }

  /** OpenAI's `POST /v1/responses/input_tokens`: the same prompt and format, counted by OpenAI. */
  private async countByInputTokens(request: ProviderRequest): Promise<ProviderTokenCount> {
    const body = this.requestBody(request);
    const format = body.response_format;
    try {
      const counted = await this.client.responses.inputTokens.count(
        {
          model: body.model,
          input: body.messages as OpenAI.Responses.ResponseInputItem[],
          ...(format?.type === 'json_schema'
            ? { text: { format: { type: 'json_schema', ...format.json_schema } } }
            : format
              ? { text: { format } }
              : {}),
        } as OpenAI.Responses.InputTokenCountParams,
        { signal: request.signal ?? null },
      );
      return { tokens: counted.input_tokens, endpoint: 'POST /v1/responses/input_tokens' };
    } catch (error) {
      throw classifyOpenAiError(error);
    }
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
    const usage = data.usage && usageOfCompletion(data.usage);
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

/**
 * OpenAI's prompt tokens include those read from its prompt cache (`cached_tokens`) and those
 * written to it (`cache_write_tokens`, where the model reports them), which it also reports apart.
 */
export function usageOfCompletion(usage: OpenAI.CompletionUsage): TokenUsage {
  const details = usage.prompt_tokens_details;
  return {
    inputTokens: usage.prompt_tokens,
    ...(details?.cached_tokens == null ? {} : { cachedInputTokens: details.cached_tokens }),
    ...(details?.cache_write_tokens == null
      ? {}
      : { cacheCreationInputTokens: details.cache_write_tokens }),
    outputTokens: usage.completion_tokens,
  };
}
