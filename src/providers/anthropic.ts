import Anthropic from '@anthropic-ai/sdk';
import { outputJsonSchema } from '../jobTypes';
import { cappedFetch } from './boundedBody';
import {
  ContractViolation,
  lateResultTimeoutMs,
  maxResponseBytes,
  temperatureOf,
  type AnthropicConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderTokenCount,
  type TokenUsage,
  outputTokenCap,
} from './provider';
import { classifySdkError } from './sdkErrors';

export const classifyAnthropicError = (error: unknown) => classifySdkError(error, Anthropic);

/** The tool the model must call: its input schema is the job type's output schema. */
const TOOL_NAME = 'record_result';

/** The Anthropic Messages API, with structured output through a forced tool call, or free text. */
export class AnthropicProvider implements Provider {
  private readonly client: Anthropic;
  /** The API's own count (`POST /v1/messages/count_tokens`), unless the config says `local`. */
  readonly countTokens?: (request: ProviderRequest) => Promise<ProviderTokenCount>;

  constructor(
    readonly config: AnthropicConfig,
    apiKey: string,
  ) {
    this.client = new Anthropic({
      apiKey,
      ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
      maxRetries: 0,
      timeout: lateResultTimeoutMs(config),
      // The answer is read only up to the provider's cap, never buffered past it.
      fetch: cappedFetch(maxResponseBytes(config)),
    });
    if (config.tokenCount !== 'local') this.countTokens = (request) => this.countWithApi(request);
  }

  /** The prompt as the call sends it (system, messages, the tool and its choice), counted by the API. */
  private async countWithApi(request: ProviderRequest): Promise<ProviderTokenCount> {
    const { model, system, messages, tools, tool_choice } = this.requestBody(request);
    try {
      const counted = await this.client.messages.countTokens(
        { model, messages, tools, tool_choice, ...(system ? { system } : {}) },
        { signal: request.signal },
      );
      return { tokens: counted.input_tokens, endpoint: 'POST /v1/messages/count_tokens' };
    } catch (error) {
      throw classifyAnthropicError(error);
    }
  }

  /** The request body: the prompt, the cap and, for a JSON answer, the tool it is forced to call. */
  requestBody(request: ProviderRequest): Anthropic.MessageCreateParamsNonStreaming {
    const messages = request.contract.prompt(request.input);
    const system = messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const temperature = temperatureOf(this.config);
    return {
      model: this.config.model,
      max_tokens: request.maxOutputTokens ?? outputTokenCap(this.config),
      // This SDK's types lack `temperature`; the API takes it, so it goes in as sent.
      ...((temperature === undefined ? {} : { temperature }) as object),
      ...(system ? { system } : {}),
      messages: messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
      // Free text asks for no tool: the model answers in text blocks.
      ...(request.contract.answer === 'text' ? {} : this.resultTool(request)),
    };
  }

  /** The result tool, whose input schema is the job type's output schema, and its forcing. */
  private resultTool(request: ProviderRequest) {
    return {
      tools: [
        {
          name: TOOL_NAME,
          description: `Record the ${request.contract.name} result.`,
          input_schema: outputJsonSchema(request.contract) as Anthropic.Tool.InputSchema,
        },
      ],
      tool_choice: { type: 'tool' as const, name: TOOL_NAME },
    };
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    const body = this.requestBody(request);
    let message: Anthropic.Message;
    try {
      message = await this.client.messages.create(body, {
        signal: request.signal,
        headers: { 'Idempotency-Key': request.attemptId },
      });
    } catch (error) {
      throw classifyAnthropicError(error);
    }
    const usage = message.usage && usageOfMessage(message.usage);
    const { content } = message;
    const call = content.find(
      (block): block is Anthropic.ToolUseBlock =>
        block.type === 'tool_use' && block.name === TOOL_NAME,
    );
    const text = content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    // The stop reason first: a cut-off tool input may even parse, and is still partial.
    if (message.stop_reason === 'refusal')
      throw new ContractViolation(`the model refused: ${text}`, text, 'refused', usage);
    if (
      message.stop_reason === 'max_tokens' ||
      message.stop_reason === 'model_context_window_exceeded'
    )
      throw new ContractViolation(
        `the answer was cut off at the output cap (stop_reason "${message.stop_reason}", ${body.max_tokens} tokens)`,
        call ? call.input : text,
        'truncated',
        usage,
      );
    if (request.contract.answer === 'text') {
      if (text.trim().length === 0)
        throw new ContractViolation('the answer has no text', text, 'no_content', usage);
      return { output: { text }, ...(usage ? { usage } : {}) };
    }
    if (!call)
      throw new ContractViolation(
        'the model answered without calling the result tool',
        text,
        'format_ignored',
        usage,
      );
    return { output: call.input, ...(usage ? { usage } : {}) };
  }
}

/**
 * Anthropic counts cache reads and cache writes apart from `input_tokens`; here every input
 * token is input, cache reads its cached part and cache writes its written part, the 1-hour
 * writes apart (`cache_creation.ephemeral_1h_input_tokens`) from the 5-minute ones.
 */
export function usageOfMessage(usage: Anthropic.Usage): TokenUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const forAnHour = usage.cache_creation?.ephemeral_1h_input_tokens;
  return {
    inputTokens: usage.input_tokens + cacheRead + cacheWrite,
    ...(usage.cache_read_input_tokens == null ? {} : { cachedInputTokens: cacheRead }),
    ...(usage.cache_creation_input_tokens == null ? {} : { cacheCreationInputTokens: cacheWrite }),
    ...(forAnHour == null ? {} : { cacheCreation1hInputTokens: forAnHour }),
    outputTokens: usage.output_tokens,
  };
}
