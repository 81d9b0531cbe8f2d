/** Why a certification call failed, as a case verdict: its kind, and a hint where one helps. */
import { ProviderCallError } from '../providers/callErrors';
import { ContractViolation, type Provider, type ViolationKind } from '../providers/provider';

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
export function failureVerdict(
  provider: Provider,
  error: unknown,
): { code: string; reason: string } {
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
