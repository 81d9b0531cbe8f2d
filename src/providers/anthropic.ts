import Anthropic from '@anthropic-ai/sdk';
import { outputJsonSchema } from '../jobTypes';
import {
  ContractViolation,
  lateResultTimeoutMs,
  type AnthropicConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
} from './provider';
import { classifySdkError } from './sdkErrors';

export const classifyAnthropicError = (error: unknown) => classifySdkError(error, Anthropic);

/** The tool the model must call: its input schema is the job type's output schema. */
const TOOL_NAME = 'record_result';

/** The Anthropic Messages API, with structured output through a forced tool call. */
export class AnthropicProvider implements Provider {
  private readonly client: Anthropic;

  constructor(
    readonly config: AnthropicConfig,
    apiKey: string,
  ) {
    this.client = new Anthropic({
      apiKey,
      ...(config.baseUrl ? { baseURL: config.baseUrl } : {}),
      maxRetries: 0,
      timeout: lateResultTimeoutMs(config),
    });
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    const messages = request.contract.prompt(request.input);
    const system = messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    let content: Anthropic.ContentBlock[];
    try {
      const message = await this.client.messages.create(
        {
          model: this.config.model,
          max_tokens: this.config.maxOutputTokens ?? 1024,
          // This SDK version has no temperature parameter; forcing the tool call pins the format.
          ...(system ? { system } : {}),
          messages: messages
            .filter((m) => m.role !== 'system')
            .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
          tools: [
            {
              name: TOOL_NAME,
              description: `Record the ${request.contract.name} result.`,
              input_schema: outputJsonSchema(request.contract) as Anthropic.Tool.InputSchema,
            },
          ],
          tool_choice: { type: 'tool', name: TOOL_NAME },
        },
        { signal: request.signal, headers: { 'Idempotency-Key': request.attemptId } },
      );
      content = message.content;
    } catch (error) {
      throw classifyAnthropicError(error);
    }
    const call = content.find(
      (block): block is Anthropic.ToolUseBlock =>
        block.type === 'tool_use' && block.name === TOOL_NAME,
    );
    if (!call) {
      const text = content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      throw new ContractViolation('the model answered without calling the result tool', text);
    }
    return { output: call.input };
  }
}
