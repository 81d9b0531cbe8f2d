/**
 * What the real chat APIs refuse before doing any work, checked on each request the simulator
 * receives, so that a request our adapters build wrongly fails here as it would in production.
 * Each rule names the provider documentation it follows (see docs/simulator.md).
 */

export type ChatProtocol = 'openai' | 'anthropic';

/** How the request asks for the answer's format. */
export type AskedFormat =
  /** OpenAI `response_format: json_schema` with `strict: true`: the answer follows the schema. */
  | { kind: 'strict_schema'; name: string }
  /** OpenAI `json_schema` without strict: best effort, like JSON mode. */
  | { kind: 'loose_schema'; name: string }
  /** OpenAI JSON mode: valid JSON, any shape. */
  | { kind: 'json_object' }
  /** Anthropic `tool_choice: {type: "tool"}`: the answer is a call of that tool. */
  | { kind: 'forced_tool'; tool: string }
  /** Nothing asked: the prompt alone. */
  | { kind: 'text' };

export interface ChatRequest {
  protocol: ChatProtocol;
  model: string;
  /** The last user message: what the model answers. */
  text: string;
  format: AskedFormat;
  /**
   * Whether any instruction (a message, Anthropic's `system`) mentions JSON: a model asked for
   * no format follows its prompt, writing JSON when told to and plain prose when not.
   */
  asksForJson: boolean;
  /** The output cap as sent, by parameter name (`max_tokens`, `max_completion_tokens`). */
  limits: Record<string, number>;
  temperature?: number;
}

export interface RequestRefusal {
  status: 400;
  message: string;
  param?: string;
  code?: string;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function refuse(message: string, param?: string, code?: string): RequestRefusal {
  return { status: 400, message, ...(param ? { param } : {}), ...(code ? { code } : {}) };
}

function positiveInteger(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1;
}

/** The last user message's text (string content, or text blocks). */
function lastUserText(messages: unknown[]): string | undefined {
  for (const message of [...messages].reverse()) {
    if (!isObject(message) || message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .filter((block): block is Json => isObject(block) && block.type === 'text')
        .map((block) => String(block.text ?? ''))
        .join('');
    }
  }
  return undefined;
}

/** Whether the text of any message (string content or text blocks), or `system`, says JSON. */
function mentionsJson(messages: unknown[], system?: unknown): boolean {
  const texts = messages.flatMap((message) => {
    if (!isObject(message)) return [];
    if (typeof message.content === 'string') return [message.content];
    if (!Array.isArray(message.content)) return [];
    return message.content.filter(isObject).map((block) => String(block.text ?? ''));
  });
  if (typeof system === 'string') texts.push(system);
  if (Array.isArray(system))
    texts.push(...system.filter(isObject).map((b) => String(b.text ?? '')));
  return texts.some((text) => /json/i.test(text));
}

/**
 * OpenAI Structured Outputs, "Supported schemas": the root is an object (not `anyOf`); every
 * object sets `additionalProperties: false` and lists every property in `required`; at most
 * 5,000 properties and 10 levels of nesting. Returns the first breach, worded as the API does.
 */
export function strictSchemaBreach(schema: unknown): string | undefined {
  if (!isObject(schema) || schema.type !== 'object' || 'anyOf' in schema)
    return 'In context=(), schema must be a JSON Schema of \'type: "object"\', got something else.';
  let properties = 0;
  const walk = (node: unknown, path: string[], depth: number): string | undefined => {
    if (!isObject(node)) return undefined;
    const context = `In context=(${path.map((p) => `'${p}'`).join(', ')})`;
    if (depth > 10) return `${context}, the schema is nested deeper than 10 levels.`;
    if (node.type === 'object' || isObject(node.properties)) {
      const keys = Object.keys(isObject(node.properties) ? node.properties : {});
      properties += keys.length;
      if (node.additionalProperties !== false)
        return `${context}, 'additionalProperties' is required to be supplied and to be false.`;
      const required = Array.isArray(node.required) ? (node.required as unknown[]) : [];
      const missing = keys.find((key) => !required.includes(key));
      if (missing !== undefined || !Array.isArray(node.required))
        return `${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing ?? keys[0] ?? ''}'.`;
      for (const key of keys) {
        const breach = walk(
          (node.properties as Json)[key],
          [...path, 'properties', key],
          depth + 1,
        );
        if (breach) return breach;
      }
    }
    for (const keyword of ['items', 'anyOf', '$defs', 'definitions'] as const) {
      const child = node[keyword];
      const children = Array.isArray(child)
        ? child
        : isObject(child) && keyword !== 'items'
          ? Object.values(child)
          : [child];
      for (const [index, item] of children.entries()) {
        const breach = walk(item, [...path, keyword, String(index)], depth + 1);
        if (breach) return breach;
      }
    }
    return undefined;
  };
  const breach = walk(schema, [], 1);
  if (breach) return breach;
  if (properties > 5_000) return 'The schema has more than 5000 object properties in total.';
  return undefined;
}

/** OpenAI chat completions (`POST /v1/chat/completions`): the body, or why it is refused. */
export function parseOpenAiRequest(body: Json): ChatRequest | RequestRefusal {
  if (typeof body.model !== 'string') return refuse('you must provide a model parameter', 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return refuse(
      "Missing required parameter: 'messages'.",
      'messages',
      'missing_required_parameter',
    );
  const text = lastUserText(body.messages);
  if (text === undefined) return refuse('no user message to answer', 'messages');
  const limits: Record<string, number> = {};
  for (const name of ['max_tokens', 'max_completion_tokens'] as const) {
    if (body[name] === undefined || body[name] === null) continue;
    if (!positiveInteger(body[name]))
      return refuse(
        `Invalid '${name}': integer below minimum value.`,
        name,
        'integer_below_min_value',
      );
    limits[name] = body[name] as number;
  }
  if (
    body.temperature !== undefined &&
    body.temperature !== null &&
    (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 2)
  )
    return refuse("Invalid 'temperature': must be a number from 0 to 2.", 'temperature');

  let format: AskedFormat = { kind: 'text' };
  const responseFormat = body.response_format;
  if (responseFormat !== undefined && responseFormat !== null) {
    if (!isObject(responseFormat)) return refuse("Invalid 'response_format'.", 'response_format');
    if (responseFormat.type === 'json_schema') {
      const spec = responseFormat.json_schema;
      if (
        !isObject(spec) ||
        typeof spec.name !== 'string' ||
        !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name)
      )
        return refuse(
          "Invalid 'response_format.json_schema.name': a string of letters, digits, '_' or '-', at most 64 characters.",
          'response_format.json_schema.name',
        );
      if (spec.strict === true) {
        const breach = strictSchemaBreach(spec.schema);
        if (breach)
          return refuse(
            `Invalid schema for response_format '${spec.name}': ${breach}`,
            'response_format',
            'invalid_json_schema',
          );
        format = { kind: 'strict_schema', name: spec.name };
      } else format = { kind: 'loose_schema', name: spec.name };
    } else if (responseFormat.type === 'json_object') {
      // JSON mode: the messages themselves must ask for JSON.
      const asked = (body.messages as unknown[]).some(
        (m) => isObject(m) && typeof m.content === 'string' && /json/i.test(m.content),
      );
      if (!asked)
        return refuse(
          "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
          'messages',
        );
      format = { kind: 'json_object' };
    } else if (responseFormat.type !== 'text') {
      return refuse(`Invalid value: '${String(responseFormat.type)}'.`, 'response_format.type');
    }
  }
  return {
    protocol: 'openai',
    model: body.model,
    text,
    format,
    asksForJson: mentionsJson(body.messages),
    limits,
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
  };
}

/** Anthropic messages (`POST /v1/messages`): the body, or why it is refused. */
export function parseAnthropicRequest(body: Json): ChatRequest | RequestRefusal {
  if (typeof body.model !== 'string') return refuse('model: Field required');
  if (body.max_tokens === undefined) return refuse('max_tokens: Field required');
  if (!positiveInteger(body.max_tokens))
    return refuse('max_tokens: Input should be greater than or equal to 1');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return refuse('messages: at least one message is required');
  const text = lastUserText(body.messages);
  if (text === undefined) return refuse('messages: the last user turn has no text');
  if (
    body.temperature !== undefined &&
    (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)
  )
    return refuse('temperature: Input should be less than or equal to 1');

  const tools = body.tools === undefined ? [] : body.tools;
  if (!Array.isArray(tools)) return refuse('tools: Input should be a valid list');
  for (const [index, tool] of tools.entries()) {
    if (
      !isObject(tool) ||
      typeof tool.name !== 'string' ||
      !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)
    )
      return refuse(`tools.${index}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    if (!isObject(tool.input_schema) || tool.input_schema.type !== 'object')
      return refuse(`tools.${index}.input_schema.type: Input should be 'object'`);
  }
  let format: AskedFormat = { kind: 'text' };
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(String(choice.type)))
      return refuse("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
    if (choice.type === 'tool') {
      const named = tools.find((tool) => isObject(tool) && tool.name === choice.name);
      if (!named)
        return refuse(
          `tool_choice: the tool '${String(choice.name)}' is not among the request's tools`,
        );
      format = { kind: 'forced_tool', tool: String(choice.name) };
    }
  }
  return {
    protocol: 'anthropic',
    model: body.model,
    text,
    format,
    asksForJson: mentionsJson(body.messages as unknown[], body.system),
    limits: { max_tokens: body.max_tokens as number },
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
  };
}

export function isRefusal(parsed: ChatRequest | RequestRefusal): parsed is RequestRefusal {
  return 'status' in parsed;
}
