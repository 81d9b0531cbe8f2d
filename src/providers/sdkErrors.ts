import { causeCode, isAmbiguousStatus, ProviderCallError, UNREACHABLE_CODES } from './provider';

/** The error classes both official SDKs (OpenAI's and Anthropic's) share in shape. */
export interface SdkErrorClasses {
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIError: abstract new (...args: never[]) => Error & { status?: number };
}

/**
 * Sorts an SDK failure into "certainly had no effect" (definite: safe to try elsewhere) or
 * "may have had an effect" (ambiguous: the attempt is unknown).
 */
export function classifySdkError(error: unknown, sdk: SdkErrorClasses): ProviderCallError {
  if (error instanceof sdk.APIUserAbortError) {
    return new ProviderCallError('request aborted after it was sent', 'ambiguous', 'aborted');
  }
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new ProviderCallError('provider did not answer in time', 'ambiguous', 'timeout');
  }
  if (error instanceof sdk.APIConnectionError) {
    const code = causeCode(error);
    if (code && UNREACHABLE_CODES.has(code)) {
      return new ProviderCallError(`provider unreachable (${code})`, 'definite', 'unreachable');
    }
    return new ProviderCallError(
      `connection failed (${code ?? 'unknown cause'})`,
      'ambiguous',
      'connection',
    );
  }
  if (error instanceof sdk.APIError && typeof error.status === 'number') {
    const status = error.status;
    return new ProviderCallError(
      `provider answered HTTP ${status}`,
      isAmbiguousStatus(status) ? 'ambiguous' : 'definite',
      `http_${status}`,
      status,
    );
  }
  return new ProviderCallError(
    `unexpected provider error: ${(error as Error)?.message ?? String(error)}`,
    'ambiguous',
    'unexpected',
  );
}
