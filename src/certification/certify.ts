/**
 * Certification: every golden case of a job type through a provider's real adapter, its output
 * cap probed, the verdict stored for the contract version in force; and which to certify.
 */
import { randomUUID } from 'node:crypto';
import { saveCertification } from '../db/certifications';
import type { Queryable } from '../db/pool';
import {
  checkOutput,
  contractVersion,
  findJobType,
  jobTypeNames,
  type AnyJobTypeContract,
} from '../jobTypes';
import { contextWindowOf, countPromptTokens } from '../providers/promptTokens';
import { outputTokenCap, providerModel, type Provider } from '../providers/provider';
import { failureVerdict } from './caseFailures';
import { loadGoldenCases, type GoldenCase } from './goldenCases';
import { probeOutputCap, type OutputCapProbe } from './outputCapProbe';

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
  /**
   * Who counted `promptTokens`: `counted by <endpoint>` (the provider's own tokenizer), or
   * `estimate: …` (counted here; with the provider's failure when its endpoint failed).
   */
  promptTokensCountedBy: string;
  /** True unless the provider's own tokenizer counted the prompt. */
  promptTokensEstimated: boolean;
  contextWindow: number | null;
  ms: number;
}

export interface CertificationReport {
  provider: string;
  model: string;
  jobType: string;
  contractVersion: string;
  passed: boolean;
  /** Who counted the prompts: the cases' `promptTokensCountedBy`, each different one once. */
  tokenizer: string;
  cases: CaseResult[];
  /** Whether the server obeys the output cap as we send it; probed once the cases pass. */
  outputCap?: OutputCapProbe;
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

  for (const [index, golden] of cases.entries()) {
    options.onProgress?.(
      `[${index + 1}/${cases.length}] ${provider.config.name} · ${contract.name} · ${golden.name}`,
    );
    const started = Date.now();
    const counted = await countPromptTokens(provider, { contract, input: golden.input });
    const result = (passed: boolean, reason?: string, code?: string): CaseResult => ({
      case: golden.name,
      passed,
      ...(code ? { code } : {}),
      ...(reason ? { reason } : {}),
      promptTokens: counted.tokens,
      promptTokensCountedBy: counted.countedBy,
      promptTokensEstimated: counted.estimate,
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
    passed:
      results.every((r) => r.passed) &&
      (outputCap?.passed !== false || outputCap.advisory === true),
    tokenizer: [...new Set(results.map((r) => r.promptTokensCountedBy))].join(' | ') || 'n/a',
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
  return report.outputCap?.passed === false && !report.outputCap.advisory
    ? report.outputCap.detail
    : 'no case failed';
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
