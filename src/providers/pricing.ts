import { roundAmount } from '../domain/cost';
import {
  outputTokenCap,
  type Money,
  type ProviderConfig,
  type ReportedCostField,
  type TokenPrice,
  type TokenUsage,
} from './provider';

/**
 * What tokens cost at a price; undefined unless both input and output counts are known. The
 * input is priced in parts: what was read from the prompt cache, what was written to it (for an
 * hour, or for 5 minutes), and the rest, each at its own price (the input price when unset).
 */
export function costOfTokens(price: TokenPrice, usage: TokenUsage): Money | undefined {
  const { inputTokens, outputTokens, cachedInputTokens = 0 } = usage;
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const written = usage.cacheCreationInputTokens ?? 0;
  const writtenForAnHour = Math.min(usage.cacheCreation1hInputTokens ?? 0, written);
  const cachedPrice = price.cachedInputPerMillion ?? price.inputPerMillion;
  const writePrice = price.cacheWritePerMillion ?? price.inputPerMillion;
  const writeForAnHourPrice = price.cacheWrite1hPerMillion ?? writePrice;
  const perMillion =
    (inputTokens - cachedInputTokens - written) * price.inputPerMillion +
    cachedInputTokens * cachedPrice +
    (written - writtenForAnHour) * writePrice +
    writtenForAnHour * writeForAnHourPrice +
    outputTokens * price.outputPerMillion;
  return {
    amount: roundAmount(perMillion / 1e6),
    currency: price.currency,
  };
}

/**
 * What one call cost: what the provider reported, else its usage at the configured price, or
 * nothing when the provider refused before any work. Undefined when none of these is known: an
 * unknown cost is never taken for zero.
 */
export function costOfCall(
  config: ProviderConfig,
  call: {
    usage?: TokenUsage;
    reported?: Money;
    /** The provider refused before doing any work (a definite failure): nothing to pay. */
    refusedBeforeWork?: boolean;
  },
): Money | undefined {
  if (call.reported) return call.reported;
  const currency = config.kind === 'http' ? config.cost?.currency : config.price?.currency;
  if (call.refusedBeforeWork && !call.usage && currency) return { amount: 0, currency };
  if (config.kind === 'http' || !config.price || !call.usage) return undefined;
  return costOfTokens(config.price, call.usage);
}

/** The value a JSON pointer (RFC 6901) names in `document`, if there is one. */
export function resolvePointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let current = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, token)) return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return current;
}

/** The cost an HTTP provider's answer states in its configured field; undefined if it does not. */
export function reportedCost(field: ReportedCostField, body: unknown): Money | undefined {
  const value = resolvePointer(body, field.pointer);
  const units = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof units !== 'number' || !Number.isFinite(units) || units < 0) return undefined;
  const amount = units / (field.unitsPerCurrencyUnit ?? 1);
  return {
    amount: roundAmount(amount),
    currency: field.currency,
  };
}

/**
 * The most one call may cost, which a budgeted owner's attempt reserves: for a chat model, the
 * prompt's tokens at its dearest input price (a cache write may cost more than plain input)
 * plus the output cap at the output price; for an HTTP provider, its `maxCostPerCall`.
 * Undefined when it cannot be known (no price, no count): such a call is not made under a budget.
 */
export function worstCaseOfCall(
  config: ProviderConfig,
  promptTokens: number | null,
): Money | undefined {
  if (config.kind === 'http') return config.maxCostPerCall;
  const price = config.price;
  if (!price || promptTokens === null) return undefined;
  const writePrice = price.cacheWritePerMillion ?? price.inputPerMillion;
  const dearestInput = Math.max(
    price.inputPerMillion,
    writePrice,
    price.cacheWrite1hPerMillion ?? writePrice,
  );
  const perMillion = promptTokens * dearestInput + outputTokenCap(config) * price.outputPerMillion;
  // Rounded up: a worst case is never below what the call may cost.
  return { amount: Math.ceil((perMillion / 1e6) * 1e12) / 1e12, currency: price.currency };
}
