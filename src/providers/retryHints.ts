import { parseRetryAfter } from '../domain/retries';
import type { ProviderErrorDetail } from './callErrors';

/** What a provider's answer headers say about trying again: `x-should-retry`, `Retry-After`. */
export function retryHints(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): Pick<ProviderErrorDetail, 'shouldRetry' | 'retryAfterMs'> {
  if (!headers) return {};
  const shouldRetry = headers.get('x-should-retry');
  const retryAfterMs = parseRetryAfter(headers, now);
  return {
    ...(shouldRetry === 'true' || shouldRetry === 'false'
      ? { shouldRetry: shouldRetry === 'true' }
      : {}),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}
