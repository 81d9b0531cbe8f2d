import type { Tiktoken } from 'js-tiktoken' with { 'resolution-mode': 'import' };
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { saveCertification } from '../db/certifications';
import type { Queryable } from '../db/pool';
import { PACKAGE_ROOT } from '../domain/packageRoot';
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
  type ViolationKind,
  outputTokenCap,
} from '../providers/provider';

/** Golden cases live in `fixtures/golden/<job type>.json`: realistic inputs, committed. */
export const GOLDEN_DIR = path.join(PACKAGE_ROOT, 'fixtures', 'golden');

export interface GoldenCase {
  name: string;
  input: Record<string, unknown>;
}

export interface CaseResult {
  case: string;
  passed: boolean;
  /**
   * Why it failed, by kind: `truncated`, `refused`, `format_ignored`, `no_content` (read from the
   * provider's stop reason), `contract` (schema or business rules), `timeout`, `context_window`,
   * or the provider's error code (`http_400`, `connection`…).
   */
  code?: string;
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
  /** Whether the server obeys the output cap as we send it; probed once the cases pass. */
  outputCap?: OutputCapProbe;
}

export interface OutputCapProbe {
  /** The request parameter the cap went out under. */
  parameter: string;
  /** The cap asked for in the probe. */
  cap: number;
  passed: boolean;
  detail: string;
}

const VIOLATION_LABELS: Record<ViolationKind, string> = {
  truncated: 'truncated',
  refused: 'refused',
  format_ignored: 'ignored the format',
  no_content: 'no content',
};

/** What the provider's own error suggests about our configuration of it. */
function configurationHint(provider: Provider, error: ProviderCallError): string {
  const { param, code } = error.detail ?? {};
  if (provider.config.kind === 'http' || error.httpStatus !== 400) return '';
  if (param === 'temperature')
    return ' (this model takes no temperature of ours: set "temperature": null for the provider)';
  if (param === 'max_tokens' && code === 'unsupported_parameter')
    return ' (set "maxTokensParameter": "max_completion_tokens" for the provider)';
  if (param === 'max_completion_tokens')
    return ' (set "maxTokensParameter": "max_tokens" for the provider)';
  return '';
}

/** A failed call, as a case verdict: its kind and its reason, with a hint where one helps. */
function failureVerdict(provider: Provider, error: unknown): { code: string; reason: string } {
  if (error instanceof ContractViolation)
    return { code: error.kind, reason: `${VIOLATION_LABELS[error.kind]}: ${error.message}` };
  if (error instanceof ProviderCallError && error.code === 'aborted')
    return {
      code: 'timeout',
      reason: `no answer within the attempt timeout (${provider.config.timeoutMs} ms)`,
    };
  if (error instanceof ProviderCallError)
    return { code: error.code, reason: `${error.message}${configurationHint(provider, error)}` };
  return { code: 'unexpected', reason: (error as Error).message };
}

const PROBE_CAP = 1;

/**
 * One call with an output cap of a single token: a server that obeys the cap stops there (or
 * writes one token); one that ignores the parameter we send it under writes its whole answer,
 * which in production means no cap at all. Usage as the server reports it is the evidence.
 */
async function probeOutputCap(
  provider: Provider,
  contract: AnyJobTypeContract,
  input: Record<string, unknown>,
): Promise<OutputCapProbe | undefined> {
  const { config } = provider;
  if (config.kind === 'http') return undefined;
  const parameter =
    config.kind === 'anthropic'
      ? 'max_tokens'
      : (config.maxTokensParameter ?? 'max_completion_tokens');
  const verdict = (passed: boolean, detail: string): OutputCapProbe => ({
    parameter,
    cap: PROBE_CAP,
    passed,
    detail,
  });
  let written: number | undefined;
  try {
    const response = await provider.call({
      attemptId: `cert-cap-${randomUUID()}`,
      contract,
      input,
      maxOutputTokens: PROBE_CAP,
      signal: AbortSignal.timeout(config.timeoutMs),
    });
    written = response.usage?.outputTokens;
  } catch (error) {
    if (error instanceof ContractViolation && error.kind === 'truncated')
      return verdict(true, `the server stopped at the cap (${parameter} = ${PROBE_CAP})`);
    if (!(error instanceof ContractViolation))
      return verdict(false, `the probe call failed: ${failureVerdict(provider, error).reason}`);
    written = error.usage?.outputTokens;
  }
  if (written === undefined)
    return verdict(true, 'the server reports no usage, so whether it obeys the cap is unknown');
  if (written <= PROBE_CAP)
    return verdict(true, `the server wrote ${written} token(s) under the cap`);
  const other = parameter === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
  return verdict(
    false,
    `the server ignored ${parameter}: asked for at most ${PROBE_CAP} token, it wrote ${written}; answers would run uncapped (set "maxTokensParameter": "${other}" for the provider)`,
  );
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
 * Runs every golden case of a job type through the real adapter, as configured (its temperature,
 * its output cap and the parameter that carries it), checks schema and business rules on each
 * answer and the prompt's size against the context window, then probes once whether the server
 * obeys the output cap, and stores the verdict for the contract version in force. A failed case
 * says why by kind (truncated, refused, ignored the format, …), from the provider's stop reason.
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
  const reserved = provider.config.kind === 'http' ? 0 : outputTokenCap(provider.config);
  const results: CaseResult[] = [];
  let tokenizer = 'n/a';

  for (const [index, golden] of cases.entries()) {
    options.onProgress?.(
      `[${index + 1}/${cases.length}] ${provider.config.name} · ${contract.name} · ${golden.name}`,
    );
    const started = Date.now();
    const counted = countPromptTokens(provider, contract, golden.input);
    tokenizer = counted.tokenizer;
    const result = (passed: boolean, reason?: string, code?: string): CaseResult => ({
      case: golden.name,
      passed,
      ...(code ? { code } : {}),
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
          'context_window',
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
      results.push(checked.ok ? result(true) : result(false, checked.reason, 'contract'));
    } catch (error) {
      const verdict = failureVerdict(provider, error);
      results.push(result(false, verdict.reason, verdict.code));
    }
  }
  // Only a provider that answers the cases well is worth probing; the others failed already.
  const outputCap =
    results.every((r) => r.passed) && cases[0]
      ? await probeOutputCap(provider, contract, cases[0].input)
      : undefined;

  const report: CertificationReport = {
    provider: provider.config.name,
    model,
    jobType: contract.name,
    contractVersion: version,
    passed: results.every((r) => r.passed) && outputCap?.passed !== false,
    tokenizer,
    cases: results,
    ...(outputCap ? { outputCap } : {}),
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

/** Why a certification failed, in a line: its first failed case, or its output-cap probe. */
export function certificationFailure(report: CertificationReport): string {
  const failedCase = report.cases.find((c) => !c.passed);
  if (failedCase) return `${failedCase.case}: ${failedCase.reason ?? failedCase.code}`;
  return report.outputCap?.passed === false ? report.outputCap.detail : 'no case failed';
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
