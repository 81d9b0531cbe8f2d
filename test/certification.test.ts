import { findCertification } from '../src/db/certifications';
import { contractVersion, findJobType } from '../src/jobTypes';
import type { OpenAiCompatibleConfig, ProviderConfig } from '../src/providers/provider';
import { runCli } from './support/cli';
import {
  anthropicProvider,
  chatProvider,
  payProvider,
  TIMES_OUT_SOON_MS,
} from './support/providers';
import { attemptRows } from './support/rows';
import { certifyForSetup, startTestStack, type TestStack } from './support/stack';

/**
 * Certification before failover, against every behaviour profile of the simulator. Each model is
 * asked the way a careful operator would configure it: JSON mode or the prompt alone where a
 * strict schema would hide what the model does.
 */
const PROFILES: Array<[string, Partial<OpenAiCompatibleConfig>]> = [
  ['sim-steady', {}],
  ['sim-hallucinates', { structuredOutput: 'json_object' }],
  ['sim-prose', { structuredOutput: 'prompt' }],
  ['sim-wrongtypes', { structuredOutput: 'json_object' }],
  // Certification must see these two time out: 2 s late, and never.
  ['sim-slow', { timeoutMs: TIMES_OUT_SOON_MS }],
  ['sim-hangs', { timeoutMs: TIMES_OUT_SOON_MS }],
  ['sim-500-after', {}],
  ['sim-drops', {}],
  ['sim-verbose', {}],
  ['sim-refuses', {}],
  ['sim-reasoning', {}],
  ['sim-legacy', {}],
];

const providers = (url: string): ProviderConfig[] => [
  ...PROFILES.map(([model, options]) => chatProvider(url, model, model, options)),
  // The same models, configured right for what they are.
  chatProvider(url, 'reasoning-no-temperature', 'sim-reasoning', { temperature: null }),
  chatProvider(url, 'legacy-max-tokens', 'sim-legacy', { maxTokensParameter: 'max_tokens' }),
  anthropicProvider(url, 'claude-steady', 'sim-steady'),
  anthropicProvider(url, 'claude-hallucinates', 'sim-hallucinates'),
  anthropicProvider(url, 'claude-verbose', 'sim-verbose'),
  anthropicProvider(url, 'claude-refuses', 'sim-refuses'),
  // Who counts the prompt: the server's own endpoint, or (none, or it fails) an estimate here.
  chatProvider(url, 'steady-tokenize', 'sim-steady', { tokenCount: 'tokenize' }),
  chatProvider(url, 'steady-input-tokens', 'sim-steady', { tokenCount: 'input_tokens' }),
  chatProvider(url, 'legacy-tokenize', 'sim-legacy', {
    maxTokensParameter: 'max_tokens',
    tokenCount: 'tokenize',
  }),
  anthropicProvider(url, 'claude-local-count', 'sim-steady', { tokenCount: 'local' }),
  anthropicProvider(url, 'claude-tight-window', 'sim-steady', {
    contextWindow: 256,
    maxOutputTokens: 255,
  }),
  // Without a late-result window of their own: the default, from timeoutMs.
  chatProvider(url, 'backup', 'sim-backup', { lateResultTimeoutMs: undefined }),
  payProvider(url, 'pay', { lateResultTimeoutMs: undefined }),
];

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ providers });
});
afterAll(async () => {
  await stack?.stop();
});

interface Job {
  id: string;
  status: string;
  failure: { code?: string; skipped?: unknown[] } | null;
  notes: Array<{ provider?: string; reason?: string }>;
  completedBy: string | null;
  result: unknown;
  attempts: Array<{
    id: string;
    state: string;
    error: { message?: string } | null;
    rawOutput: unknown;
  }>;
}

async function runJob(key: string, plan: string[]): Promise<Job> {
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key },
    body: {
      type: 'summarize',
      input: { text: 'Certified providers only. Failover is earned.' },
      providers: plan,
    },
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as Job;
  return (await (await stack.request('GET', `/v1/jobs/${id}?wait=30`)).json()) as Job;
}

test('the well-behaved model and the charge API pass certification; the report is stored per contract version', async () => {
  for (const [provider, jobType] of [
    ['sim-steady', 'summarize'],
    ['claude-steady', 'summarize'],
    ['pay', 'charge'],
  ] as const) {
    const report = await stack.certify(provider, jobType);
    expect(report).toMatchObject({
      provider,
      jobType,
      passed: true,
      contractVersion: contractVersion(findJobType(jobType)!),
    });
    expect(report.cases.every((c) => c.passed)).toBe(true);
  }
  const report = await stack.certify('sim-steady', 'summarize');
  expect(report.tokenizer).toBe('estimate: js-tiktoken o200k_base');
  expect(report.cases.every((c) => (c.promptTokens ?? 0) > 20 && c.contextWindow === 128_000)).toBe(
    true,
  );
});

/** The input tokens the simulator billed for each case's call of a certification run, by case number. */
function billedPerCase(before: ReadonlySet<string>): Map<number, number> {
  const billed = new Map<number, number>();
  for (const entry of stack.simulator.ledger()) {
    const number = /^cert-[0-9a-f-]{36}-(\d+)$/.exec(entry.idempotencyKey)?.[1];
    if (number && !before.has(entry.idempotencyKey) && entry.tokensServed)
      billed.set(Number(number), entry.tokensServed.input);
  }
  return billed;
}

test.each([
  ['claude-steady', 'POST /v1/messages/count_tokens'],
  ['steady-tokenize', 'POST /tokenize'],
  ['steady-input-tokens', 'POST /v1/responses/input_tokens'],
])(
  'certification counts the prompt with %s’s own count endpoint (%s), the count its call is then billed, and says so',
  async (provider, endpoint) => {
    const before = new Set(stack.simulator.ledger().map((e) => e.idempotencyKey));
    const report = await stack.certify(provider, 'summarize');
    expect(report.passed).toBe(true);
    expect(report.tokenizer).toBe(`counted by ${endpoint}`);
    const billed = billedPerCase(before);
    expect(billed.size).toBe(report.cases.length);
    for (const [index, c] of report.cases.entries()) {
      expect(c).toMatchObject({
        promptTokensCountedBy: `counted by ${endpoint}`,
        promptTokensEstimated: false,
      });
      expect(c.promptTokens).toBe(billed.get(index + 1));
    }
  },
);

test('without a count endpoint, or when it fails, the prompt is counted here and the report labels it an estimate', async () => {
  const cases = [
    ['sim-steady', /^estimate: js-tiktoken o200k_base$/],
    ['claude-local-count', /^estimate: chars \/ 3\.5$/],
    // Its server has no /tokenize: the local count stands in, with the endpoint's failure.
    ['legacy-tokenize', /^estimate: js-tiktoken o200k_base; the provider's count failed: .*404/],
  ] as const;
  for (const [provider, label] of cases) {
    const report = await stack.certify(provider, 'summarize');
    expect(report.passed).toBe(true);
    expect(report.tokenizer).toMatch(label);
    for (const c of report.cases) {
      expect(c.promptTokensEstimated).toBe(true);
      expect(c.promptTokensCountedBy).toMatch(label);
      expect(c.promptTokens).toBeGreaterThan(20);
    }
  }
});

test('the context-window check uses the provider’s count, not the estimate', async () => {
  const counted = await stack.certify('claude-steady', 'summarize');
  const estimated = await stack.certify('claude-local-count', 'summarize');
  const report = await stack.certify('claude-tight-window', 'summarize');
  expect(report.passed).toBe(false);
  for (const [index, c] of report.cases.entries()) {
    const providerCount = counted.cases[index]!.promptTokens!;
    expect(providerCount).not.toBe(estimated.cases[index]!.promptTokens);
    expect(c).toMatchObject({
      code: 'context_window',
      promptTokens: providerCount,
      promptTokensCountedBy: 'counted by POST /v1/messages/count_tokens',
    });
    expect(c.reason).toBe(
      `prompt needs ${providerCount} tokens + 255 for the answer; the window is 256`,
    );
  }
});

test.each([
  ['sim-hallucinates', 'contract', /Unrecognized key.*confidence/],
  ['sim-prose', 'format_ignored', /^ignored the format: the answer is not JSON/],
  ['sim-wrongtypes', 'contract', /summary.*expected string/],
  ['sim-slow', 'timeout', /no answer within the attempt timeout/],
  ['sim-hangs', 'timeout', /no answer within the attempt timeout/],
  ['sim-500-after', 'http_500', /HTTP 500/],
  ['sim-drops', 'connection', /connection failed/],
  ['sim-verbose', 'truncated', /^truncated: the answer was cut off at the output cap/],
  ['sim-refuses', 'refused', /^refused: the model refused: I'm sorry/],
  ['sim-reasoning', 'http_400', /Unsupported value: 'temperature'.*set "temperature": null/],
  ['claude-hallucinates', 'contract', /Unrecognized key.*confidence/],
  ['claude-verbose', 'truncated', /^truncated: .*stop_reason "max_tokens"/],
  ['claude-refuses', 'refused', /^refused: /],
])('certification fails for %s, as %s, with its reason', async (provider, code, reason) => {
  const report = await stack.certify(provider, 'summarize');
  expect(report.passed).toBe(false);
  expect(report.cases.every((c) => !c.passed && c.code === code)).toBe(true);
  expect(report.cases[0]!.reason).toMatch(reason);
});

test('certification probes the output cap: a server that ignores max_completion_tokens fails it, and passes once the cap goes out as max_tokens', async () => {
  const uncapped = await stack.certify('sim-legacy', 'summarize');
  expect(uncapped.cases.every((c) => c.passed)).toBe(true);
  expect(uncapped.passed).toBe(false);
  expect(uncapped.outputCap).toMatchObject({ parameter: 'max_completion_tokens', passed: false });
  expect(uncapped.outputCap!.detail).toMatch(
    /ignored max_completion_tokens.*"maxTokensParameter": "max_tokens"/,
  );
  for (const provider of ['legacy-max-tokens', 'reasoning-no-temperature', 'sim-steady']) {
    const report = await stack.certify(provider, 'summarize');
    expect(report).toMatchObject({ passed: true, outputCap: { passed: true } });
  }
});

test('failover goes only to a certified fallback: refused and explained before, done after certifying it', async () => {
  const version = contractVersion(findJobType('summarize')!);
  await stack.pool.query(`DELETE FROM certifications WHERE provider = 'backup'`);

  // The primary refuses definitively; the fallback is not certified: no failover, and why.
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 400 },
  });
  const refused = await runJob('failover-uncertified', ['sim-steady', 'backup']);
  expect(refused.status).toBe('failed');
  expect(refused.failure).toMatchObject({ code: 'no-certified-provider' });
  expect(refused.notes).toEqual([
    expect.objectContaining({
      provider: 'backup',
      reason: `not certified for the summarize contract ${version}`,
    }),
  ]);
  expect(refused.attempts).toHaveLength(1);

  expect((await stack.certify('backup', 'summarize')).passed).toBe(true);
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 400 },
  });
  const failedOver = await runJob('failover-certified', ['sim-steady', 'backup']);
  expect(failedOver.status).toBe('succeeded');
  expect(failedOver.completedBy).toBe(`${failedOver.id}:2`);
  expect(failedOver.notes).toEqual([]);
});

test('a changed contract version makes the previous certification not count', async () => {
  expect((await stack.certify('backup', 'summarize')).passed).toBe(true);
  const summarize = findJobType('summarize')!;
  const changed = {
    ...summarize,
    prompt: (input: { text: string }) => [
      { role: 'user' as const, content: `Summarise, briefly: ${input.text}` },
    ],
  };
  expect(contractVersion(changed)).not.toBe(contractVersion(summarize));
  expect(contractVersion({ ...summarize, revision: summarize.revision + 1 })).not.toBe(
    contractVersion(summarize),
  );
  await expect(
    findCertification(stack.pool, {
      provider: 'backup',
      model: 'sim-backup',
      jobType: 'summarize',
      contractVersion: contractVersion(changed),
    }),
  ).resolves.toBeUndefined();

  // As if the stored verdict were for an older contract: the next job does not fail over.
  await stack.pool.query(
    `UPDATE certifications SET contract_version = '0123456789abcdef' WHERE provider = 'backup'`,
  );
  stack.simulator.inject({
    route: 'chat',
    model: 'sim-steady',
    fault: { kind: 'fail_before', status: 400 },
  });
  const job = await runJob('failover-old-contract', ['sim-steady', 'backup']);
  expect(job.failure).toMatchObject({ code: 'no-certified-provider' });
});

test.each([
  [
    'sim-hallucinates',
    'contract_violation',
    /Unrecognized key.*confidence/,
    { summary: expect.any(String), confidence: 0.97 },
  ],
  ['sim-prose', 'format_ignored', /not JSON/, expect.stringMatching(/^Sure! Here is your summary/)],
  [
    'sim-verbose',
    'output_truncated',
    /cut off at the output cap \(finish_reason "length", 1024 tokens\)/,
    expect.stringMatching(/^\{"summary":"Certified providers only/),
  ],
  [
    'sim-refuses',
    'model_refused',
    /the model refused: I'm sorry/,
    "I'm sorry, but I can't help with that request.",
  ],
])(
  'a %s answer fails the attempt as %s, with the reason and the raw output kept on the attempt',
  async (provider, code, reason, raw) => {
    const job = await runJob(`raw-${provider}`, [provider]);
    expect(job.status).toBe('failed');
    expect(job.result).toBeNull();
    expect(job.attempts).toEqual([
      expect.objectContaining({
        state: 'failed',
        rawOutput: raw,
        error: expect.objectContaining({ code }),
      }),
    ]);
    expect(job.attempts[0]!.error!.message).toMatch(reason);
    expect((await attemptRows(stack.pool, job.id)).map((a) => a.state)).toEqual(['failed']);
  },
);

test('onejob providers certify runs from the command line and prints the verdicts', async () => {
  const env = { ONEJOB_PROVIDERS: JSON.stringify(providers(stack.simulator.url)) };
  const ok = await runCli(
    stack,
    ['providers', 'certify', '--provider', 'sim-steady', '--job-type', 'summarize'],
    env,
  );
  expect(ok.code).toBe(0);
  expect(ok.stderr).toContain('certifying [1/4] sim-steady · summarize · incident-report');
  expect(ok.stdout).toMatch(
    /sim-steady\s+sim-steady\s+summarize\s+[0-9a-f]{16}\s+CERTIFIED\s+4\/4/,
  );

  const bad = await runCli(
    stack,
    ['providers', 'certify', '--provider', 'sim-prose', '--json'],
    env,
  );
  expect(bad.code).toBe(2);
  // Every job type it can serve: prose breaks the JSON contract, and is what free text asks for.
  expect(JSON.parse(bad.stdout)).toEqual([
    expect.objectContaining({ provider: 'sim-prose', jobType: 'summarize', passed: false }),
    expect.objectContaining({ provider: 'sim-prose', jobType: 'chat', passed: true }),
  ]);

  const wrong = await runCli(stack, ['providers', 'certify', '--provider', 'nobody'], env);
  expect(wrong.code).toBe(1);
  expect(wrong.stderr.trim()).toMatch(/^onejob: unknown provider nobody/);
});

test('a certification a test only needs (certifyForSetup) gives each case 30 s, so a loaded machine cannot fail it by the clock: sim-slow answers in 2 s, past its 1 s attempt timeout (which fails it as timeout above), and passes there', async () => {
  await certifyForSetup(stack, [['sim-slow', 'summarize']]);
  const stored = await findCertification(stack.pool, {
    provider: 'sim-slow',
    model: 'sim-slow',
    jobType: 'summarize',
    contractVersion: contractVersion(findJobType('summarize')!),
  });
  expect(stored?.passed).toBe(true);
});
