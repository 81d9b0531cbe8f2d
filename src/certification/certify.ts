import type { Tiktoken } from 'js-tiktoken' with { 'resolution-mode': 'import' };
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { saveCertification } from '../db/certifications';
import type { Queryable } from '../db/pool';
import {
  checkOutput,
  contractVersion,
  findJobType,
  jobTypeNames,
  type AnyJobTypeContract,
} from '../jobTypes';
import {
  ContractViolation,
  ProviderCallError,
  providerModel,
  type Provider,
} from '../providers/provider';

/** Golden cases live in `fixtures/golden/<job type>.json`: realistic inputs, committed. */
export const GOLDEN_DIR = path.resolve(__dirname, '..', '..', 'fixtures', 'golden');

export interface GoldenCase {
  name: string;
  input: Record<string, unknown>;
}

export interface CaseResult {
  case: string;
  passed: boolean;
  reason?: string;
  promptTokens: number | null;
  contextWindow: number | null;
  ms: number;
}

export interface CertificationReport {
  provider: string;
  model: string;
  jobType: string;
  contractVersion: string;
  passed: boolean;
  tokenizer: string;
  cases: CaseResult[];
}

export async function loadGoldenCases(jobType: string, dir = GOLDEN_DIR): Promise<GoldenCase[]> {
  const cases = JSON.parse(
    await readFile(path.join(dir, `${jobType}.json`), 'utf8'),
  ) as GoldenCase[];
  if (!Array.isArray(cases) || cases.length === 0)
    throw new Error(`no golden cases for ${jobType} in ${dir}`);
  return cases;
}

// js-tiktoken ships CommonJS for require(), but its type declarations are ESM-only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getEncoding } = require('js-tiktoken') as typeof import('js-tiktoken', {
  with: { 'resolution-mode': 'import' },
});
const encodings = new Map<string, Tiktoken>();

/**
 * Prompt tokens with the provider's tokenizer: js-tiktoken for OpenAI-compatible models; for
 * Anthropic models (whose tokenizer is not published) an estimate of one token per 3.5
 * characters, which over-counts English slightly; HTTP providers have no prompt.
 */
export function countPromptTokens(
  provider: Provider,
  contract: AnyJobTypeContract,
  input: unknown,
): { tokens: number | null; tokenizer: string } {
  const { config } = provider;
  if (config.kind === 'http') return { tokens: null, tokenizer: 'n/a (no prompt)' };
  const messages = contract.prompt(input);
  if (config.kind === 'anthropic') {
    const chars = messages.reduce((sum, m) => sum + m.content.length, 0);
    return {
      tokens: Math.ceil(chars / 3.5) + 8 * messages.length,
      tokenizer: 'estimate (chars / 3.5)',
    };
  }
  const name = config.tokenizer ?? 'o200k_base';
  let encoding = encodings.get(name);
  if (!encoding) {
    encoding = getEncoding(name);
    encodings.set(name, encoding);
  }
  // Each chat message costs a few tokens of framing on top of its content.
  const tokens = messages.reduce((sum, m) => sum + encoding.encode(m.content).length + 4, 3);
  return { tokens, tokenizer: `js-tiktoken ${name}` };
}

/** The context window assumed when the config does not say: conservative per kind. */
function contextWindowOf(provider: Provider): number | null {
  const { config } = provider;
  if (config.kind === 'http') return null;
  return config.contextWindow ?? (config.kind === 'anthropic' ? 200_000 : 128_000);
}

/**
 * Runs every golden case of a job type through the real adapter (temperature 0 where the API
 * has it), checks schema and business rules on each answer and the prompt's size against the
 * context window, and stores the verdict for the contract version in force.
 */
export async function certifyProvider(options: {
  db: Queryable;
  provider: Provider;
  jobType: string;
  cases?: GoldenCase[];
  onProgress?: (line: string) => void;
  contract?: AnyJobTypeContract;
}): Promise<CertificationReport> {
  const contract = options.contract ?? findJobType(options.jobType);
  if (!contract) throw new Error(`unknown job type ${options.jobType}`);
  const { provider } = options;
  if (!contract.providerKinds.includes(provider.config.kind)) {
    throw new Error(
      `provider ${provider.config.name} (${provider.config.kind}) cannot run ${contract.name} jobs`,
    );
  }
  const cases = options.cases ?? (await loadGoldenCases(contract.name));
  const version = contractVersion(contract);
  const model = providerModel(provider.config);
  const window = contextWindowOf(provider);
  const reserved = provider.config.kind === 'http' ? 0 : (provider.config.maxOutputTokens ?? 1024);
  const results: CaseResult[] = [];
  let tokenizer = 'n/a';

  for (const [index, golden] of cases.entries()) {
    options.onProgress?.(
      `[${index + 1}/${cases.length}] ${provider.config.name} · ${contract.name} · ${golden.name}`,
    );
    const started = Date.now();
    const counted = countPromptTokens(provider, contract, golden.input);
    tokenizer = counted.tokenizer;
    const result = (passed: boolean, reason?: string): CaseResult => ({
      case: golden.name,
      passed,
      ...(reason ? { reason } : {}),
      promptTokens: counted.tokens,
      contextWindow: window,
      ms: Date.now() - started,
    });
    if (counted.tokens !== null && window !== null && counted.tokens + reserved > window) {
      results.push(
        result(
          false,
          `prompt needs ${counted.tokens} tokens + ${reserved} for the answer; the window is ${window}`,
        ),
      );
      continue;
    }
    const attemptId = `cert-${randomUUID()}-${index + 1}`;
    try {
      const { output } = await provider.call({
        attemptId,
        contract,
        input: golden.input,
        // A certified provider must answer within its attempt timeout.
        signal: AbortSignal.timeout(provider.config.timeoutMs),
      });
      const checked = checkOutput(contract, golden.input, output, { attemptId });
      results.push(checked.ok ? result(true) : result(false, checked.reason));
    } catch (error) {
      if (error instanceof ContractViolation) results.push(result(false, error.message));
      else if (error instanceof ProviderCallError && error.code === 'aborted') {
        results.push(
          result(false, `no answer within the attempt timeout (${provider.config.timeoutMs} ms)`),
        );
      } else results.push(result(false, (error as Error).message));
    }
  }

  const report: CertificationReport = {
    provider: provider.config.name,
    model,
    jobType: contract.name,
    contractVersion: version,
    passed: results.every((r) => r.passed),
    tokenizer,
    cases: results,
  };
  await saveCertification(options.db, {
    provider: report.provider,
    model,
    jobType: contract.name,
    contractVersion: version,
    passed: report.passed,
    report,
  });
  return report;
}

/** Certifies each chosen provider for each chosen job type it can serve. */
export async function certifyMany(options: {
  db: Queryable;
  providers: Array<{ provider: Provider; jobTypes: AnyJobTypeContract[] }>;
  onProgress?: (line: string) => void;
}): Promise<CertificationReport[]> {
  const reports: CertificationReport[] = [];
  for (const { provider, jobTypes } of options.providers) {
    for (const contract of jobTypes) {
      reports.push(
        await certifyProvider({
          db: options.db,
          provider,
          jobType: contract.name,
          contract,
          onProgress: options.onProgress,
        }),
      );
    }
  }
  return reports;
}

/** Each chosen provider with the job types it can serve (all providers / all types by default). */
export function certificationPlan(
  registry: { names(): string[]; get(name: string): Provider },
  choice: { provider?: string; jobType?: AnyJobTypeContract } = {},
): Array<{ provider: Provider; jobTypes: AnyJobTypeContract[] }> {
  const contracts = choice.jobType
    ? [choice.jobType]
    : jobTypeNames().map((name) => findJobType(name)!);
  return (choice.provider ? [choice.provider] : registry.names())
    .map((name) => registry.get(name))
    .map((provider) => ({
      provider,
      jobTypes: contracts.filter((c) => c.providerKinds.includes(provider.config.kind)),
    }))
    .filter((entry) => entry.jobTypes.length > 0);
}
