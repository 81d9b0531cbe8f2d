/** The provider configs' schema (ONEJOB_PROVIDERS): each field's bounds, checked when read. */
import { z } from 'zod';
import { CURRENCY_CODE } from '../domain/cost';
import { DURATION_PATTERN, durationMs } from '../domain/durations';

const common = {
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'provider names are lowercase [a-z0-9._-]'),
  timeoutMs: z.number().int().min(100).max(3_600_000),
  lateResultTimeoutMs: z.number().int().min(100).max(86_400_000).optional(),
  notFoundGraceMs: z.number().int().min(0).max(86_400_000).optional(),
  sideEffects: z.boolean(),
  callbackSecretEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/)
    .optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/)
    .optional(),
  maxResponseBytes: z.number().int().min(1024).max(1_073_741_824).optional(),
  retry: z
    .union([
      z.literal(false),
      z
        .strictObject({
          maxAttempts: z.number().int().min(1).max(100).optional(),
          initialDelayMs: z.number().int().min(1).max(3_600_000).optional(),
          maxDelayMs: z.number().int().min(1).max(3_600_000).optional(),
        })
        .refine(
          (retry) =>
            retry.initialDelayMs === undefined ||
            retry.maxDelayMs === undefined ||
            retry.initialDelayMs <= retry.maxDelayMs,
          'retry.initialDelayMs may not exceed retry.maxDelayMs',
        ),
    ])
    .optional(),
  breaker: z
    .union([
      z.literal(false),
      z.strictObject({
        consecutiveFailures: z.number().int().min(1).max(1_000).optional(),
        failureRate: z.number().gt(0).max(1).optional(),
        minimumCalls: z.number().int().min(1).max(1_000_000).optional(),
        windowMs: z.number().int().min(1_000).max(86_400_000).optional(),
        coolOffMs: z.number().int().min(100).max(86_400_000).optional(),
      }),
    ])
    .optional(),
};

/** A span of time: milliseconds, or "24h", "90m", "30s", "250ms" (domain/durations.ts). */
const duration = z.union([
  z.number().int().min(1),
  z.string().regex(DURATION_PATTERN, 'a duration, e.g. 24h, 90m, 30s, 250ms'),
]);

const currency = z.string().regex(CURRENCY_CODE, 'a currency is an ISO 4217 code, e.g. USD');
const perMillion = z.number().min(0).max(1_000_000);

const chatModel = {
  model: z.string().min(1),
  contextWindow: z.number().int().min(256).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  capProbe: z.enum(['required', 'advisory']).optional(),
  price: z
    .strictObject({
      currency,
      inputPerMillion: perMillion,
      outputPerMillion: perMillion,
      cachedInputPerMillion: perMillion.optional(),
      cacheWritePerMillion: perMillion.optional(),
      cacheWrite1hPerMillion: perMillion.optional(),
    })
    .optional(),
};

/** What a provider's config must be: checked as ONEJOB_PROVIDERS is read. */
export const providerConfigSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    ...common,
    ...chatModel,
    kind: z.literal('openai-compatible'),
    baseUrl: z.url(),
    structuredOutput: z.enum(['json_schema', 'json_object', 'prompt']).optional(),
    tokenizer: z.enum(['o200k_base', 'cl100k_base']).optional(),
    tokenCount: z.enum(['tokenize', 'input_tokens', 'local']).optional(),
    maxTokensParameter: z.enum(['max_completion_tokens', 'max_tokens']).optional(),
  }),
  z.strictObject({
    ...common,
    ...chatModel,
    kind: z.literal('anthropic'),
    baseUrl: z.url().optional(),
    tokenCount: z.enum(['count_tokens', 'local']).optional(),
  }),
  z.strictObject({
    ...common,
    kind: z.literal('http'),
    url: z.url(),
    statusUrl: z.string().includes('{key}').optional(),
    searchUrl: z.string().includes('{key}').optional(),
    consistency: z.strictObject({ lagMs: z.number().int().min(0).max(86_400_000) }).optional(),
    replay: z
      .strictObject({ keyWindow: duration, margin: duration })
      .refine(
        (replay) => durationMs(replay.margin) < durationMs(replay.keyWindow),
        'replay.margin must be shorter than replay.keyWindow',
      )
      .optional(),
    keyHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name')
      .optional(),
    cost: z
      .strictObject({
        pointer: z.string().regex(/^(\/[^/]*)+$/, 'a JSON pointer, e.g. /fee'),
        currency,
        unitsPerCurrencyUnit: z.number().positive().optional(),
      })
      .optional(),
    maxCostPerCall: z
      .strictObject({ currency, amount: z.number().min(0).max(1_000_000) })
      .optional(),
  }),
]);
