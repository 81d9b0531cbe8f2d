/** Whether a provider's server obeys the output cap as we send it: one call capped at a token. */
import { randomUUID } from 'node:crypto';
import type { AnyJobTypeContract } from '../jobTypes';
import { ContractViolation, type Provider } from '../providers/provider';
import { failureVerdict } from './caseFailures';

export interface OutputCapProbe {
  /** The request parameter the cap went out under. */
  parameter: string;
  /** The cap asked for in the probe. */
  cap: number;
  passed: boolean;
  detail: string;
  /** The provider's config makes the probe advisory: its failure does not fail certification. */
  advisory?: true;
}

const PROBE_CAP = 1;

/**
 * One call with an output cap of a single token: a server that obeys the cap stops there (or
 * writes one token); one that ignores the parameter we send it under writes its whole answer,
 * which in production means no cap at all. Usage as the server reports it is the evidence.
 */
export async function probeOutputCap(
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
  const advisory = config.capProbe === 'advisory';
  const verdict = (passed: boolean, detail: string): OutputCapProbe => ({
    parameter,
    cap: PROBE_CAP,
    passed,
    detail:
      advisory && !passed
        ? `${detail} (advisory, as the provider's capProbe says: certified all the same, and its answers may run uncapped)`
        : detail,
    ...(advisory ? { advisory: true as const } : {}),
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
