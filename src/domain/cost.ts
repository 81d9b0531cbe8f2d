/**
 * What a provider call came to, as its ledger line says: its answer was recorded (`won`), came
 * after another result or the job's end (`lost`), broke the contract (`rejected`), or there was
 * no usable answer (`failed`).
 */
export const CALL_OUTCOMES = ['won', 'lost', 'rejected', 'failed'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** Tokens a provider says it read and wrote for one call. */
export interface TokenUsage {
  /** Every input token, those read from the prompt cache included. */
  inputTokens?: number;
  /** The part of the input read from the prompt cache (billed at its own price). */
  cachedInputTokens?: number;
  /**
   * The part of the input written to the prompt cache, for whatever lifetime (billed at its own
   * price). Priced with the call; not kept in the ledger's columns.
   */
  cacheCreationInputTokens?: number;
  /** Of the cache writes, those kept for an hour (Anthropic's 1-hour cache); the rest last 5 minutes. */
  cacheCreation1hInputTokens?: number;
  outputTokens?: number;
}

/** The counts the ledger keeps per call (its columns), and sums per job. */
const LEDGER_COUNTS = ['inputTokens', 'cachedInputTokens', 'outputTokens'] as const;

/** An ISO 4217 currency code, as every price, cost and budget names its currency. */
export const CURRENCY_CODE = /^[A-Z]{3}$/;

/** An amount of money in one currency (an ISO 4217 code). */
export interface Money {
  amount: number;
  currency: string;
}

/** One call's line in a job's ledger, as the attempts table holds it. */
export interface CallLine {
  id: string;
  /** Set once the call began: only then can it cost anything. */
  startedAt: Date | null;
  /** Set when the call ended. */
  callOutcome: CallOutcome | null;
  usage: TokenUsage | null;
  cost: Money | null;
}

/** What a job's calls cost in one currency: all of them, its winner's, and everyone else's. */
export interface CostInCurrency {
  currency: string;
  total: number;
  /** Null when the winning call's cost is unknown: it is in no total then. */
  winner: number | null;
  others: number;
}

export interface JobCost {
  /** One entry per currency calls were priced in; empty when no call's cost is known. */
  amounts: CostInCurrency[];
  /**
   * Calls sent whose cost is not known: the provider reported no usage or has no price, or the
   * call has not ended yet. While any remain, `amounts` is a lower bound.
   */
  unknownCalls: number;
  /** Tokens reported over all calls; a count no call reported is absent. */
  tokens: TokenUsage;
}

/**
 * The most one call's cost may be and still be recorded. The ledger's counters keep billionths
 * of a currency unit in a bigint (migration 0008), and no provider's price for one call comes
 * near a million units: a cost above it is a misread (a cost pointer aimed at a timestamp,
 * absurd usage), not a price.
 */
export const MAX_CALL_COST = 1_000_000;

/**
 * A call's cost as the ledger may record it, or why it is recorded as unknown instead. Written
 * with the call's end inside the compare-and-swap's transaction: a cost must never be able to
 * roll back the result it came with.
 */
export function recordableCost(cost: Money | undefined): { cost?: Money; unknownBecause?: string } {
  if (!cost) return {};
  if (!Number.isFinite(cost.amount) || cost.amount < 0)
    return { unknownBecause: `the cost ${cost.amount} ${cost.currency} is not an amount` };
  if (cost.amount > MAX_CALL_COST)
    return {
      unknownBecause: `the cost ${cost.amount} ${cost.currency} is over ${MAX_CALL_COST} for one call: a misread, not a price`,
    };
  return { cost };
}

/** Amounts, and their sums, are kept to a trillionth of a currency unit: far below any price, above float noise. */
export const roundAmount = (amount: number): number => Math.round(amount * 1e12) / 1e12;

/**
 * Known costs summed per currency, the winner's apart from everyone else's. When the job has a
 * winner whose cost is not among them, its share is unknown (null), never zero.
 */
export function sumCosts(
  costs: ReadonlyArray<{ id: string; cost: Money }>,
  winnerId: string | null,
): CostInCurrency[] {
  const winnerUnknown = winnerId !== null && !costs.some(({ id }) => id === winnerId);
  const byCurrency = new Map<string, CostInCurrency>();
  for (const { id, cost } of costs) {
    const { currency, amount } = cost;
    const entry = byCurrency.get(currency) ?? {
      currency,
      total: 0,
      winner: winnerUnknown ? null : 0,
      others: 0,
    };
    entry.total = roundAmount(entry.total + amount);
    if (id === winnerId) entry.winner = roundAmount((entry.winner ?? 0) + amount);
    else entry.others = roundAmount(entry.others + amount);
    byCurrency.set(currency, entry);
  }
  return [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

/**
 * Usage as a provider reported it, kept only where it makes sense: whole, non-negative counts,
 * cache reads and writes together within the input, hour-long writes within the writes. Anything
 * else is unknown, so that a malformed report can neither fail the recording of an answer nor
 * price a call below zero.
 */
export function cleanUsage(reported: TokenUsage | undefined): TokenUsage | undefined {
  if (!reported) return undefined;
  const count = (value: unknown): number | undefined =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const inputTokens = count(reported.inputTokens);
  const outputTokens = count(reported.outputTokens);
  let cachedInputTokens = count(reported.cachedInputTokens);
  if (
    cachedInputTokens !== undefined &&
    (inputTokens === undefined || cachedInputTokens > inputTokens)
  )
    cachedInputTokens = undefined;
  let written = count(reported.cacheCreationInputTokens);
  if (
    written !== undefined &&
    (inputTokens === undefined || written + (cachedInputTokens ?? 0) > inputTokens)
  )
    written = undefined;
  let writtenForAnHour = count(reported.cacheCreation1hInputTokens);
  if (writtenForAnHour !== undefined && (written === undefined || writtenForAnHour > written))
    writtenForAnHour = undefined;
  const usage: TokenUsage = {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens }),
    ...(written === undefined ? {} : { cacheCreationInputTokens: written }),
    ...(writtenForAnHour === undefined ? {} : { cacheCreation1hInputTokens: writtenForAnHour }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
  };
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/** A job's bill from its calls' ledger lines: the winner's cost apart from the rest. */
export function jobCost(calls: readonly CallLine[], winnerId: string | null): JobCost {
  const tokens = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  const reported = new Set<(typeof LEDGER_COUNTS)[number]>();
  const known: Array<{ id: string; cost: Money }> = [];
  let unknownCalls = 0;
  for (const call of calls) {
    if (!call.startedAt) continue;
    for (const key of LEDGER_COUNTS) {
      const count = call.usage?.[key];
      if (count === undefined) continue;
      tokens[key] += count;
      reported.add(key);
    }
    if (call.callOutcome && call.cost) known.push({ id: call.id, cost: call.cost });
    else unknownCalls += 1;
  }
  return {
    amounts: sumCosts(known, winnerId),
    unknownCalls,
    tokens: Object.fromEntries([...reported].map((key) => [key, tokens[key]])) as TokenUsage,
  };
}

/** An amount as people read it: its currency, and no more digits than it needs. */
export function formatMoney(amount: number, currency: string): string {
  return `${currency} ${amount.toFixed(12).replace(/0+$/, '').replace(/\.$/, '')}`;
}

/** One line on what a job's calls cost so far, for the CLI and the Web UI's details. */
export function describeJobCost(cost: JobCost): string {
  const parts = cost.amounts.map(
    (entry) =>
      `${formatMoney(entry.total, entry.currency)} (winner ${entry.winner === null ? 'unknown' : formatMoney(entry.winner, entry.currency)}, others ${formatMoney(entry.others, entry.currency)})`,
  );
  if (cost.unknownCalls > 0)
    parts.push(`${cost.unknownCalls} call${cost.unknownCalls === 1 ? '' : 's'} of unknown cost`);
  return parts.length > 0 ? `cost ${parts.join('; ')}` : 'cost: no call yet';
}

/**
 * The details line for the costs a workflow run has heard of: the calls of its attempts that
 * ended with a known cost; every other attempt counts as of unknown cost (it may still be
 * running, or its cost was never reported).
 */
export function describeCosts(
  costs: ReadonlyMap<string, Money>,
  winnerId: string | null,
  attempts: number,
): string {
  const known = [...costs].map(([id, cost]) => ({ id, cost }));
  return describeJobCost({
    amounts: sumCosts(known, winnerId),
    unknownCalls: Math.max(0, attempts - known.length),
    tokens: {},
  });
}
