import { cleanUsage, describeCosts, describeJobCost, jobCost } from '../src/domain/cost';
import { usageOfMessage } from '../src/providers/anthropic';
import { usageOfCompletion } from '../src/providers/openaiCompatible';
import { costOfCall, costOfTokens, reportedCost, resolvePointer } from '../src/providers/pricing';
import type { ProviderConfig } from '../src/providers/provider';
import { parseProviderConfigs } from '../src/providers/registry';

/** Turning reported usage into money, and a job's calls into its bill. */
const price = { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 };
const chat: ProviderConfig = {
  name: 'chat',
  kind: 'openai-compatible',
  baseUrl: 'http://127.0.0.1:1/v1',
  model: 'm',
  timeoutMs: 1_000,
  sideEffects: false,
  price,
};

test('tokens are priced per million, cached input at its own price (else the input price)', () => {
  expect(costOfTokens(price, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toEqual({
    amount: 12.5,
    currency: 'USD',
  });
  const cached = { ...price, cachedInputPerMillion: 1.25 };
  // 400 uncached at 2.5, 600 cached at 1.25, 100 out at 10: (1000 + 750 + 1000) / 1e6.
  expect(
    costOfTokens(cached, { inputTokens: 1_000, cachedInputTokens: 600, outputTokens: 100 }),
  ).toEqual({ amount: 0.00275, currency: 'USD' });
  expect(
    costOfTokens(price, { inputTokens: 1_000, cachedInputTokens: 600, outputTokens: 100 }),
  ).toEqual({ amount: 0.0035, currency: 'USD' });
});

test('a cost is unknown, never zero, without usage, without a count, or without a price', () => {
  expect(costOfTokens(price, { inputTokens: 10 })).toBeUndefined();
  expect(costOfCall(chat, {})).toBeUndefined();
  expect(
    costOfCall({ ...chat, price: undefined } as ProviderConfig, {
      usage: { inputTokens: 1, outputTokens: 1 },
    }),
  ).toBeUndefined();
  // A call the provider refused before any work costs nothing, in the price's currency.
  expect(costOfCall(chat, { refusedBeforeWork: true })).toEqual({ amount: 0, currency: 'USD' });
  // What the provider reported wins over a computed price.
  expect(
    costOfCall(chat, {
      usage: { inputTokens: 1, outputTokens: 1 },
      reported: { amount: 3, currency: 'EUR' },
    }),
  ).toEqual({ amount: 3, currency: 'EUR' });
});

test('an HTTP provider’s cost is read from the answer by JSON pointer, in the configured units', () => {
  const field = { pointer: '/fee/amount', currency: 'EUR', unitsPerCurrencyUnit: 100 };
  expect(reportedCost(field, { fee: { amount: 66 } })).toEqual({ amount: 0.66, currency: 'EUR' });
  expect(reportedCost(field, { fee: { amount: '66' } })).toEqual({ amount: 0.66, currency: 'EUR' });
  for (const body of [{}, { fee: { amount: -1 } }, { fee: { amount: 'x' } }, null, 'text'])
    expect(reportedCost(field, body)).toBeUndefined();
  expect(resolvePointer({ 'a/b': { '~c': 1 } }, '/a~1b/~0c')).toBe(1);
  expect(resolvePointer({ a: 1 }, '/constructor')).toBeUndefined();
});

test('Anthropic’s cache reads and writes are counted as input, the reads as its cached part and the writes as its written part', () => {
  expect(
    usageOfMessage({
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    } as Parameters<typeof usageOfMessage>[0]),
  ).toEqual({
    inputTokens: 130,
    cachedInputTokens: 100,
    cacheCreationInputTokens: 20,
    outputTokens: 5,
  });
});

test('Anthropic’s cache writes are priced at their own rates, the 1-hour ones apart from the 5-minute ones, as its usage reports them', () => {
  const [claude] = parseProviderConfigs(
    JSON.stringify([
      {
        name: 'claude',
        kind: 'anthropic',
        model: 'm',
        timeoutMs: 1_000,
        sideEffects: false,
        // A base price of 3 with Anthropic's multipliers: reads 0.1×, 5-minute writes 1.25×, 1-hour 2×.
        price: {
          currency: 'USD',
          inputPerMillion: 3,
          outputPerMillion: 15,
          cachedInputPerMillion: 0.3,
          cacheWritePerMillion: 3.75,
          cacheWrite1hPerMillion: 6,
        },
      },
    ]),
  );
  const usage = usageOfMessage({
    input_tokens: 10,
    output_tokens: 5,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 50,
    cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 },
  } as Parameters<typeof usageOfMessage>[0]);
  expect(usage).toEqual({
    inputTokens: 160,
    cachedInputTokens: 100,
    cacheCreationInputTokens: 50,
    cacheCreation1hInputTokens: 30,
    outputTokens: 5,
  });
  // 10 × 3 + 100 × 0.3 + 20 × 3.75 + 30 × 6 + 5 × 15 = 390 per million.
  expect(costOfCall(claude!, { usage: cleanUsage(usage)! })).toEqual({
    amount: 0.00039,
    currency: 'USD',
  });
  // Without prices of their own, cache writes cost what input costs.
  expect(costOfTokens(price, usage)).toEqual(
    costOfTokens(price, { inputTokens: 160, cachedInputTokens: 100, outputTokens: 5 }),
  );
});

test('OpenAI’s cached input and its cache writes, where it reports them, are priced at their own rates', () => {
  const usage = usageOfCompletion({
    prompt_tokens: 2_000,
    completion_tokens: 10,
    total_tokens: 2_010,
    prompt_tokens_details: { cached_tokens: 1_024, cache_write_tokens: 500 },
  });
  expect(usage).toEqual({
    inputTokens: 2_000,
    cachedInputTokens: 1_024,
    cacheCreationInputTokens: 500,
    outputTokens: 10,
  });
  const priced = { ...price, cachedInputPerMillion: 1.25, cacheWritePerMillion: 3 };
  // 476 × 2.5 + 1,024 × 1.25 + 500 × 3 + 10 × 10 = 4,070 per million.
  expect(costOfTokens(priced, usage)).toEqual({ amount: 0.00407, currency: 'USD' });
});

test('a price list must name an ISO 4217 currency and non-negative prices', () => {
  const config = (p: unknown) => JSON.stringify([{ ...chat, price: p }]);
  expect(() => parseProviderConfigs(config({ ...price, currency: 'usd' }))).toThrow(/ISO 4217/);
  expect(() => parseProviderConfigs(config({ ...price, inputPerMillion: -1 }))).toThrow(
    /inputPerMillion/,
  );
  expect(parseProviderConfigs(config(price))[0]).toMatchObject({ price });
});

test('a job’s bill holds the winner apart, sums per currency, and counts calls of unknown cost', () => {
  const started = new Date();
  const cost = jobCost(
    [
      {
        id: 'j:1',
        startedAt: started,
        callOutcome: 'lost',
        usage: { inputTokens: 5, outputTokens: 2 },
        cost: { amount: 0.1, currency: 'USD' },
      },
      {
        id: 'j:2',
        startedAt: started,
        callOutcome: 'won',
        usage: { inputTokens: 7, outputTokens: 3 },
        cost: { amount: 0.2, currency: 'USD' },
      },
      { id: 'j:3', startedAt: started, callOutcome: 'failed', usage: null, cost: null },
      { id: 'j:4', startedAt: started, callOutcome: null, usage: null, cost: null },
      { id: 'j:5', startedAt: null, callOutcome: null, usage: null, cost: null },
      {
        id: 'j:6',
        startedAt: started,
        callOutcome: 'rejected',
        usage: null,
        cost: { amount: 1, currency: 'EUR' },
      },
    ],
    'j:2',
  );
  expect(cost).toEqual({
    amounts: [
      { currency: 'EUR', total: 1, winner: 0, others: 1 },
      { currency: 'USD', total: 0.3, winner: 0.2, others: 0.1 },
    ],
    unknownCalls: 2,
    tokens: { inputTokens: 12, outputTokens: 5 },
  });
  expect(describeJobCost(cost)).toBe(
    'cost EUR 1 (winner EUR 0, others EUR 1); USD 0.3 (winner USD 0.2, others USD 0.1); 2 calls of unknown cost',
  );
});

test('a winner whose cost is unknown has an unknown share, never zero, in the API, the CLI and the Web UI', () => {
  const started = new Date();
  const cost = jobCost(
    [
      {
        id: 'j:1',
        startedAt: started,
        callOutcome: 'lost',
        usage: null,
        cost: { amount: 0.1, currency: 'USD' },
      },
      { id: 'j:2', startedAt: started, callOutcome: 'won', usage: null, cost: null },
    ],
    'j:2',
  );
  expect(cost.amounts).toEqual([{ currency: 'USD', total: 0.1, winner: null, others: 0.1 }]);
  expect(describeJobCost(cost)).toBe(
    'cost USD 0.1 (winner unknown, others USD 0.1); 1 call of unknown cost',
  );
  // The workflow knows only the costs it heard: every other attempt is of unknown cost.
  expect(describeCosts(new Map([['j:2', { amount: 0.2, currency: 'USD' }]]), 'j:2', 2)).toBe(
    'cost USD 0.2 (winner USD 0.2, others USD 0); 1 call of unknown cost',
  );
});

test('reported usage that makes no sense is unknown: not a whole non-negative count, or cached beyond the input', () => {
  expect(cleanUsage({ inputTokens: 10, cachedInputTokens: 4, outputTokens: 3 })).toEqual({
    inputTokens: 10,
    cachedInputTokens: 4,
    outputTokens: 3,
  });
  expect(cleanUsage({ inputTokens: Number.NaN, cachedInputTokens: 4, outputTokens: 3 })).toEqual({
    outputTokens: 3,
  });
  expect(cleanUsage({ inputTokens: 10, cachedInputTokens: 11, outputTokens: -1 })).toEqual({
    inputTokens: 10,
  });
  expect(cleanUsage({ inputTokens: 1.5 })).toBeUndefined();
  // Cache reads and writes together within the input; hour-long writes within the writes.
  expect(
    cleanUsage({ inputTokens: 10, cachedInputTokens: 6, cacheCreationInputTokens: 5 }),
  ).toEqual({ inputTokens: 10, cachedInputTokens: 6 });
  expect(
    cleanUsage({ inputTokens: 10, cacheCreationInputTokens: 4, cacheCreation1hInputTokens: 5 }),
  ).toEqual({ inputTokens: 10, cacheCreationInputTokens: 4 });
  expect(
    cleanUsage({ inputTokens: 10, cacheCreationInputTokens: 4, cacheCreation1hInputTokens: 4 }),
  ).toEqual({ inputTokens: 10, cacheCreationInputTokens: 4, cacheCreation1hInputTokens: 4 });
  expect(cleanUsage(undefined)).toBeUndefined();
});
