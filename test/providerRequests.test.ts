import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { attemptId } from '../src/domain/job';
import { findJobType, jobTypeNames, type AnyJobTypeContract } from '../src/jobTypes';
import { ProviderCallError } from '../src/providers/callErrors';
import { ContractViolation, type Provider, type ProviderConfig } from '../src/providers/provider';
import { ProviderRegistry } from '../src/providers/registry';
import { providerSaid } from '../src/providers/sdkErrors';
import { startSimulator, type SimulatorServer } from '../tools/simulator/server';
import { anthropicProvider, chatProvider, payProvider } from './support/providers';

/**
 * Our real requests, as each adapter builds them, sent to the simulator and checked against the
 * provider's documented rules, so that a schema or parameter mistake fails here before it fails
 * in production; and the answers real providers give (cut off, refused, refused parameters,
 * overloaded), read the way they mean.
 */
let simulator: SimulatorServer;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(async () => {
  await simulator?.close();
});

const common = { timeoutMs: 5_000, lateResultTimeoutMs: 5_000 };
function adapter(config: ProviderConfig): Provider {
  return new ProviderRegistry([config], {}).get(config.name);
}
const openai = (model = 'sim-steady', options: Parameters<typeof chatProvider>[3] = {}) =>
  adapter(chatProvider(simulator.url, 'openai', model, { ...common, ...options }));
const anthropic = (model = 'sim-steady', options: Parameters<typeof anthropicProvider>[3] = {}) =>
  adapter(anthropicProvider(simulator.url, 'anthropic', model, { ...common, ...options }));

// The job types whose answer is JSON of their schema; free text (chat) asks for no format.
const chatContracts = jobTypeNames()
  .map((name) => findJobType(name)!)
  .filter((c) => c.providerKinds.includes('openai-compatible') && c.answer !== 'text');
const INPUT = { text: 'A request is checked before it is sent. Then it is sent.' };

let calls = 0;
async function send(
  provider: Provider,
  contract: AnyJobTypeContract = findJobType('summarize')!,
  options: { attemptId?: string; maxOutputTokens?: number } = {},
): Promise<{ body: Record<string, unknown>; outcome: unknown }> {
  const attemptId = options.attemptId ?? `request-${++calls}`;
  let outcome: unknown;
  try {
    outcome = await provider.call({
      attemptId,
      contract,
      input: contract.name === 'summarize' ? INPUT : contract.sample,
      ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
    });
  } catch (error) {
    outcome = error;
  }
  const sent = simulator.requests().filter((r) => r.idempotencyKey === attemptId);
  return { body: sent[sent.length - 1]!.body as Record<string, unknown>, outcome };
}

/** Every breach of OpenAI's strict-schema rules in a JSON schema, by path (checked here, by us). */
function strictBreaches(node: unknown, path = '$'): string[] {
  if (typeof node !== 'object' || node === null) return [];
  const schema = node as Record<string, unknown>;
  const breaches: string[] = [];
  if (schema.properties) {
    const keys = Object.keys(schema.properties as object);
    if (schema.additionalProperties !== false) breaches.push(`${path}: additionalProperties`);
    const required = (schema.required as string[] | undefined) ?? [];
    for (const key of keys)
      if (!required.includes(key)) breaches.push(`${path}: ${key} not required`);
  }
  for (const [key, child] of Object.entries(schema)) {
    if (typeof child === 'object') breaches.push(...strictBreaches(child, `${path}.${key}`));
  }
  return breaches;
}

describe.each(chatContracts.map((c) => [c.name, c] as const))(
  'the %s request as sent',
  (_name, contract) => {
    test('OpenAI-compatible: a strict json_schema every property of which is required, additionalProperties false everywhere; the cap as max_completion_tokens; temperature 0', async () => {
      const { body, outcome } = await send(openai(), contract);
      expect(outcome).toMatchObject({ output: expect.anything() });
      const format = body.response_format as {
        type: string;
        json_schema: { name: string; strict: boolean; schema: Record<string, unknown> };
      };
      expect(format.type).toBe('json_schema');
      expect(format.json_schema.strict).toBe(true);
      expect(format.json_schema.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(format.json_schema.schema.type).toBe('object');
      expect(strictBreaches(format.json_schema.schema)).toEqual([]);
      expect(body).toMatchObject({ max_completion_tokens: 1024, temperature: 0 });
      expect(body).not.toHaveProperty('max_tokens');
    });

    test('Anthropic: the result tool forced by name, its input schema an object; max_tokens set; no temperature', async () => {
      const { body, outcome } = await send(anthropic(), contract);
      expect(outcome).toMatchObject({ output: expect.anything() });
      const tools = body.tools as Array<{ name: string; input_schema: { type: string } }>;
      const choice = body.tool_choice as { type: string; name: string };
      expect(choice.type).toBe('tool');
      expect(tools.map((t) => t.name)).toContain(choice.name);
      expect(tools.every((t) => /^[a-zA-Z0-9_-]{1,64}$/.test(t.name))).toBe(true);
      expect(tools.every((t) => t.input_schema.type === 'object')).toBe(true);
      expect(body.max_tokens).toBe(1024);
      expect(body).not.toHaveProperty('temperature');
    });
  },
);

describe('the free-text (chat) request as sent', () => {
  const chat = findJobType('chat')!;

  test('OpenAI-compatible: no response_format, whatever the provider asks of JSON jobs; the cap and temperature as for any job', async () => {
    const { body, outcome } = await send(
      openai('sim-steady', { structuredOutput: 'json_object' }),
      chat,
    );
    expect(outcome).toMatchObject({ output: { text: expect.any(String) } });
    expect(body).not.toHaveProperty('response_format');
    expect(body).toMatchObject({ max_completion_tokens: 1024, temperature: 0 });
  });

  test('Anthropic: no tool and no tool choice; max_tokens set', async () => {
    const { body, outcome } = await send(anthropic(), chat);
    expect(outcome).toMatchObject({ output: { text: expect.any(String) } });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body.max_tokens).toBe(1024);
  });
});

test('the payment request: the job input as the JSON body, the attempt id as an Idempotency-Key within the 255 characters payment APIs take', async () => {
  const pay = adapter(payProvider(simulator.url, 'pay', { ...common, statusUrl: undefined }));
  const charge = findJobType('charge')!;
  // The longest attempt id we make: a job id and the highest attempt number.
  const id = attemptId(randomUUID(), Number.MAX_SAFE_INTEGER);
  const { body, outcome } = await send(pay, charge, { attemptId: id });
  expect(outcome).toMatchObject({ output: { status: 'succeeded' } });
  expect(body).toEqual(charge.sample);
  expect(simulator.requests().find((r) => r.idempotencyKey === id)).toBeDefined();
  expect(id.length).toBeLessThanOrEqual(255);
});

test('per-provider request settings: no temperature when set to null, the cap under max_tokens when told', async () => {
  const { body } = await send(
    openai('sim-steady', {
      temperature: null,
      maxTokensParameter: 'max_tokens',
      maxOutputTokens: 300,
    }),
  );
  expect(body).not.toHaveProperty('temperature');
  expect(body).not.toHaveProperty('max_completion_tokens');
  expect(body.max_tokens).toBe(300);
  const claude = await send(anthropic('sim-steady', { temperature: 0.2 }));
  expect(claude.body.temperature).toBe(0.2);
});

test('a contract whose output schema breaks the strict rules is refused by the provider (definite), and our own check names the breach', async () => {
  const loose: AnyJobTypeContract = {
    ...findJobType('summarize')!,
    name: 'loose',
    output: z.strictObject({ summary: z.string(), note: z.string().optional() }),
  };
  const { body, outcome } = await send(openai(), loose);
  const schema = (body.response_format as { json_schema: { schema: unknown } }).json_schema.schema;
  expect(strictBreaches(schema)).toEqual(['$: note not required']);
  expect(outcome).toBeInstanceOf(ProviderCallError);
  expect(outcome).toMatchObject({ certainty: 'definite', httpStatus: 400 });
  expect((outcome as Error).message).toMatch(
    /Invalid schema for response_format 'loose'.*'required'.*Missing 'note'/,
  );
});

describe('what a model says, read from its stop reason', () => {
  test.each([
    ['OpenAI', () => openai('sim-verbose')],
    ['Anthropic', () => anthropic('sim-verbose')],
  ])(
    '%s: an answer cut off at the output cap is truncated, even when its partial output parses',
    async (_api, make) => {
      const { outcome } = await send(make());
      expect(outcome).toBeInstanceOf(ContractViolation);
      expect(outcome).toMatchObject({ kind: 'truncated', usage: { outputTokens: 1024 } });
      expect((outcome as Error).message).toMatch(/cut off at the output cap/);
    },
  );

  test('Anthropic: the cut-off tool input would pass the schema, and is still not taken', async () => {
    const { outcome } = await send(anthropic('sim-verbose'));
    const raw = (outcome as ContractViolation).rawOutput;
    expect(raw).toEqual({ summary: expect.stringMatching(/^A request is checked/) });
    expect(findJobType('summarize')!.output.safeParse(raw).success).toBe(true);
    expect(outcome).toMatchObject({ kind: 'truncated' });
  });

  test.each([
    ['OpenAI', () => openai('sim-steady')],
    ['Anthropic', () => anthropic('sim-steady')],
  ])('%s: a small output cap truncates an ordinary answer', async (_api, make) => {
    const { outcome } = await send(make(), undefined, { maxOutputTokens: 3 });
    expect(outcome).toMatchObject({ kind: 'truncated', usage: { outputTokens: 3 } });
  });

  test.each([
    ['OpenAI', () => openai('sim-refuses')],
    ['Anthropic', () => anthropic('sim-refuses')],
  ])('%s: a refusal is refused, with its text kept', async (_api, make) => {
    const { outcome } = await send(make());
    expect(outcome).toBeInstanceOf(ContractViolation);
    expect(outcome).toMatchObject({
      kind: 'refused',
      rawOutput: expect.stringMatching(/can't help/),
    });
  });

  test('a strict schema holds a model that adds keys to the schema; JSON mode does not', async () => {
    expect((await send(openai('sim-hallucinates'))).outcome).toMatchObject({
      output: { summary: expect.any(String) },
    });
    expect(
      (await send(openai('sim-hallucinates', { structuredOutput: 'json_object' }))).outcome,
    ).toMatchObject({ output: { confidence: 0.97 } });
    // A forced tool call is always a tool call, even from a model that would rather chat.
    expect((await send(anthropic('sim-prose'))).outcome).toMatchObject({
      output: { summary: expect.any(String) },
    });
    expect((await send(openai('sim-prose', { structuredOutput: 'prompt' }))).outcome).toMatchObject(
      { kind: 'format_ignored' },
    );
  });
});

describe('parameters real servers refuse or ignore', () => {
  test('a reasoning model refuses temperature 0 (definite, with the provider`s own words) and answers without it', async () => {
    const { outcome } = await send(openai('sim-reasoning'));
    expect(outcome).toBeInstanceOf(ProviderCallError);
    expect(outcome).toMatchObject({
      certainty: 'definite',
      httpStatus: 400,
      detail: { param: 'temperature', code: 'unsupported_value' },
    });
    expect((outcome as Error).message).toMatch(/HTTP 400: Unsupported value: 'temperature'/);
    expect((await send(openai('sim-reasoning', { temperature: null }))).outcome).toMatchObject({
      output: { summary: expect.any(String) },
    });
    expect(
      (await send(openai('sim-reasoning', { temperature: null, maxTokensParameter: 'max_tokens' })))
        .outcome,
    ).toMatchObject({ detail: { param: 'max_tokens', code: 'unsupported_parameter' } });
  });

  test('a server that predates max_completion_tokens ignores it (no cap at all) and obeys max_tokens', async () => {
    const uncapped = await send(openai('sim-legacy'), undefined, { maxOutputTokens: 3 });
    expect(uncapped.outcome).toMatchObject({ output: { summary: expect.any(String) } });
    expect(
      (uncapped.outcome as { usage: { outputTokens: number } }).usage.outputTokens,
    ).toBeGreaterThan(3);
    const capped = await send(
      openai('sim-legacy', { maxTokensParameter: 'max_tokens' }),
      undefined,
      {
        maxOutputTokens: 3,
      },
    );
    expect(capped.outcome).toMatchObject({ kind: 'truncated' });
  });
});

describe('errors in each protocol`s own words', () => {
  const makers = { chat: () => openai(), messages: () => anthropic() };
  test.each([
    ['chat' as const, 503, { type: 'server_error', shouldRetry: true }],
    ['messages' as const, 529, { type: 'overloaded_error', shouldRetry: true }],
    ['messages' as const, 400, { type: 'invalid_request_error', shouldRetry: false }],
  ])(
    'the %s API answering HTTP %s: its error type and x-should-retry reach the attempt',
    async (route, status, detail) => {
      simulator.inject({ route, fault: { kind: 'fail_before', status } });
      const { outcome } = await send(makers[route]());
      expect(outcome).toMatchObject({ httpStatus: status, detail });
    },
  );

  test('a key the provider echoes in its message is masked before the message is kept', () => {
    const said = providerSaid({
      error: {
        type: 'error',
        error: {
          type: 'authentication_error',
          message: 'invalid x-api-key sk-ant-api03-AbCdEf123456',
        },
      },
    });
    expect(said.message).toBe('invalid x-api-key [redacted]');
    expect(said.detail).toEqual({ type: 'authentication_error' });
  });

  test('an overloaded model answers 529 overloaded_error on the messages API and 503 on chat completions, both may be retried', async () => {
    expect((await send(anthropic('sim-overloaded'))).outcome).toMatchObject({
      httpStatus: 529,
      certainty: 'ambiguous',
      detail: { type: 'overloaded_error', shouldRetry: true },
    });
    expect((await send(openai('sim-overloaded'))).outcome).toMatchObject({
      httpStatus: 503,
      detail: { code: 'overloaded', shouldRetry: true },
    });
  });
});

test('the chat APIs do the work for every request, whatever its Idempotency-Key: no de-duplication', async () => {
  for (const provider of [openai(), anthropic()]) {
    const attemptId = `same-key-${provider.config.kind}`;
    await send(provider, undefined, { attemptId });
    await send(provider, undefined, { attemptId });
    expect(simulator.ledger().find((e) => e.idempotencyKey === attemptId)).toMatchObject({
      requests: 2,
      executions: 2,
      replays: 0,
    });
  }
});
