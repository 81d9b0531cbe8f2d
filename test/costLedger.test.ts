import type { JobCost, Money, TokenUsage } from '../src/domain/cost';
import type { TokenPrice } from '../src/providers/provider';
import { chargeBody, createJob, operator, readJob, untilJob } from './support/jobs';
import { eventually } from './support/polling';
import { chatProvider, payProvider } from './support/providers';
import { attemptRows } from './support/rows';
import { useTestStack, type TestStack } from './support/stack';
import { untilWorkflowClosed } from './support/temporal';

/**
 * What every call cost: the usage a provider reports is written with the call's end, for the
 * winner and for every other call (a hedge that lost, an answer that broke the contract, one
 * that came after the job was cancelled), and priced from the provider's price list.
 */
const PRIMARY_PRICE: TokenPrice = { currency: 'USD', inputPerMillion: 0.15, outputPerMillion: 0.6 };
const FALLBACK_PRICE: TokenPrice = { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 };

const stack = useTestStack({
  providers: (url) => [
    chatProvider(url, 'primary', 'sim-steady', { timeoutMs: 10_000, price: PRIMARY_PRICE }),
    chatProvider(url, 'fallback', 'sim-backup', { timeoutMs: 10_000, price: FALLBACK_PRICE }),
    chatProvider(url, 'unpriced', 'sim-steady', { timeoutMs: 10_000 }),
    // A cost field read in units a trillion times too small: every charge's cost is absurd.
    payProvider(url, 'pay-misread', {
      cost: { pointer: '/amountCents', currency: 'EUR', unitsPerCurrencyUnit: 1e-12 },
    }),
  ],
  hedgeDelayMs: 300,
  certify: [['fallback', 'summarize']],
});

interface LedgerAttempt {
  id: string;
  state: string;
  callOutcome: string | null;
  usage: TokenUsage | null;
  cost: Money | null;
}
interface LedgerJob {
  id: string;
  status: string;
  completedBy: string | null;
  attempts: LedgerAttempt[];
  cost: JobCost;
}

const readLedger = async (id: string) => (await readJob(stack, id)) as unknown as LedgerJob;

/** Tokens the simulator says it served for one attempt, by the attempt id it was sent as key. */
function servedBySimulator(s: TestStack, attemptId: string) {
  const entry = s.simulator
    .ledger()
    .find((e) => e.route === 'chat' && e.idempotencyKey === attemptId);
  return entry?.tokensServed;
}

/** The price of a call's tokens, computed here from the simulator's own count. */
function priced(price: TokenPrice, served: { input: number; output: number }): number {
  return (served.input * price.inputPerMillion + served.output * price.outputPerMillion) / 1e6;
}

/** Every ended call's usage must be what the simulator served, token for token. */
function expectUsageAsServed(attempt: LedgerAttempt): { input: number; output: number } {
  const served = servedBySimulator(stack, attempt.id);
  expect(served).toBeDefined();
  expect(attempt.usage).toEqual({
    inputTokens: served!.input,
    cachedInputTokens: 0,
    outputTokens: served!.output,
  });
  return served!;
}

/** A summary job whose calls to the primary's model are held at `gate` until it opens. */
function summaryWithPrimaryHeld(gate: string, body: Record<string, unknown>) {
  stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hold', gate } });
  return createJob(stack, { type: 'summarize', ...body });
}

async function metricsText(): Promise<string> {
  return (await fetch(`${stack.apiUrl}/metrics`)).text();
}

function metricValue(text: string, metric: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${metric} `));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

test('a hedged job whose loser answered late shows both calls’ usage and cost, and the job’s total with the winner apart', async () => {
  const job = await summaryWithPrimaryHeld('ledger-hedge', {
    input: { text: 'The first call is held. The hedge answers and wins.' },
    providers: ['primary', 'fallback'],
    mode: 'hedged',
  });
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  // The held call answers only now, after the job has its result: its answer loses.
  stack.simulator.openGate('ledger-hedge');
  const [a, b] = [`${job.id}:1`, `${job.id}:2`];
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'lost',
    15_000,
  );
  const ledger = await eventually(
    () => readLedger(job.id),
    (j) => j.attempts.every((attempt) => attempt.callOutcome !== null),
  );
  expect(ledger.completedBy).toBe(b);
  const [loser, winner] = ledger.attempts;
  expect([loser?.id, loser?.callOutcome, winner?.id, winner?.callOutcome]).toEqual([
    a,
    'lost',
    b,
    'won',
  ]);
  const loserCost = priced(PRIMARY_PRICE, expectUsageAsServed(loser!));
  const winnerCost = priced(FALLBACK_PRICE, expectUsageAsServed(winner!));
  expect(loser!.cost?.currency).toBe('USD');
  expect(loser!.cost?.amount).toBeCloseTo(loserCost, 12);
  expect(winner!.cost?.amount).toBeCloseTo(winnerCost, 12);
  expect(loserCost).toBeGreaterThan(0);

  expect(ledger.cost.unknownCalls).toBe(0);
  expect(ledger.cost.amounts).toHaveLength(1);
  const [usd] = ledger.cost.amounts;
  expect(usd?.currency).toBe('USD');
  expect(usd?.winner).toBeCloseTo(winnerCost, 12);
  expect(usd?.others).toBeCloseTo(loserCost, 12);
  expect(usd?.total).toBeCloseTo(loserCost + winnerCost, 12);
  expect(ledger.cost.tokens.inputTokens).toBe(
    loser!.usage!.inputTokens! + winner!.usage!.inputTokens!,
  );

  // The Web UI's details of the closed workflow end with what the calls it heard end cost.
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
  const metadata = await stack.temporal.workflow
    .getHandle(job.workflowId)
    .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  // The loser's late answer may have reached the workflow before it closed, or not: then it
  // is a call of unknown cost, never an "others" of zero.
  expect(metadata.currentDetails).toMatch(
    new RegExp(
      `^done: ${b} won · cost USD [0-9.]+ \\(winner USD [0-9.]+, (others USD 0\\); 1 call of unknown cost|others USD 0\\.[0-9]+\\))$`,
    ),
  );

  // Prometheus sees the loser's spend under its own outcome.
  const text = await metricsText();
  expect(
    metricValue(
      text,
      'onejob_attempt_cost_total{provider="primary",outcome="lost",currency="USD"}',
    ),
  ).toBeGreaterThanOrEqual(loserCost - 1e-9);
  expect(
    metricValue(
      text,
      'onejob_attempt_cost_total{provider="fallback",outcome="won",currency="USD"}',
    ),
  ).toBeGreaterThanOrEqual(winnerCost - 1e-9);
  expect(
    metricValue(text, 'onejob_attempt_tokens_total{provider="primary",kind="output"}'),
  ).toBeGreaterThanOrEqual(loser!.usage!.outputTokens!);
});

test('a call that answers after its job was cancelled is recorded with its usage and cost: the bill counts it', async () => {
  const job = await summaryWithPrimaryHeld('ledger-cancel', {
    input: { text: 'Cancelled while the model thinks. Paid for all the same.' },
    providers: ['primary'],
  });
  await eventually(
    () => attemptRows(stack.pool, job.id),
    (rows) => rows[0]?.state === 'running',
  );
  expect(
    (await operator(stack, 'POST', `/jobs/${job.id}/cancel`, { reason: 'ledger' })).status,
  ).toBe(200);
  stack.simulator.openGate('ledger-cancel');
  const ledger = await eventually(
    () => readLedger(job.id),
    (j) => j.attempts[0]?.callOutcome !== null,
    15_000,
  );
  expect(ledger.status).toBe('cancelled');
  const [late] = ledger.attempts;
  expect(late?.callOutcome).toBe('lost');
  const cost = priced(PRIMARY_PRICE, expectUsageAsServed(late!));
  expect(late?.cost?.amount).toBeCloseTo(cost, 12);
  expect(ledger.cost.amounts).toEqual([
    { currency: 'USD', total: late!.cost!.amount, winner: 0, others: late!.cost!.amount },
  ]);
  expect(ledger.cost.unknownCalls).toBe(0);
});

test('an answer that breaks the contract is paid for too, and a job seen succeeded already shows what its winning call cost', async () => {
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'malformed_output' },
  });
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'The first answer is not JSON. The fallback answers well.' },
    providers: ['primary', 'fallback'],
  });
  // Read as the job is first seen succeeded: the winning call's line came with its result.
  const ledger = (await untilJob(
    stack,
    job.id,
    (j) => j.status === 'succeeded',
  )) as unknown as LedgerJob;
  const [broken, winner] = ledger.attempts;
  expect([broken?.state, broken?.callOutcome, winner?.callOutcome]).toEqual([
    'failed',
    'rejected',
    'won',
  ]);
  const brokenCost = priced(PRIMARY_PRICE, expectUsageAsServed(broken!));
  expect(broken?.cost?.amount).toBeCloseTo(brokenCost, 12);
  expect(ledger.cost.amounts[0]?.others).toBeCloseTo(brokenCost, 12);
  expect(ledger.cost.amounts[0]?.winner).toBeCloseTo(winner!.cost!.amount, 12);
});

test('a provider without a price list has calls of unknown cost, shown as unknown and never as zero', async () => {
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Nobody told us the price. So we do not guess it.' },
    providers: ['unpriced'],
  });
  await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  const ledger = await eventually(
    () => readLedger(job.id),
    (j) => j.attempts[0]?.callOutcome !== null,
  );
  const [call] = ledger.attempts;
  expect(call?.callOutcome).toBe('won');
  expectUsageAsServed(call!);
  expect(call?.cost).toBeNull();
  expect(ledger.cost).toMatchObject({ amounts: [], unknownCalls: 1 });
  const text = await metricsText();
  expect(
    metricValue(text, 'onejob_attempt_calls_unpriced_total{provider="unpriced",outcome="won"}'),
  ).toBeGreaterThanOrEqual(1);
});

test('a cost out of any range never vetoes the result: the winner is recorded, its cost unknown with the reason', async () => {
  const job = await createJob(stack, chargeBody(['pay-misread']));
  const done = await untilJob(stack, job.id, (j) =>
    ['succeeded', 'failed', 'cancelled'].includes(j.status),
  );
  expect(done.status).toBe('succeeded');
  expect(done.completedBy).toBe(`${job.id}:1`);
  const [attempt] = (await readLedger(job.id)).attempts;
  expect(attempt).toMatchObject({ state: 'succeeded', callOutcome: 'won', cost: null });
  const { rows } = await stack.pool.query<{ cost_unknown_reason: string | null }>(
    'SELECT cost_unknown_reason FROM attempts WHERE id = $1',
    [`${job.id}:1`],
  );
  expect(rows[0]?.cost_unknown_reason).toMatch(/is over 1000000 for one call: a misread/);
});
