/**
 * The failures of a job's attempts as its run keeps them: for the job's failure record, and in
 * the shape the retry table reads.
 */
import type { FailedCall } from '../domain/retries';
import type { AttemptSummary } from './definitions';

/**
 * The record of an attempt's failure. The attempt's own record keeps the provider's word on it
 * under `provider`; here that name is the provider's, so its word moves to `providerDetail`.
 */
export function failureEntry(
  summary: AttemptSummary,
  error: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const { provider: providerDetail, ...rest } = error ?? {};
  return {
    attemptId: summary.attemptId,
    provider: summary.provider,
    ...rest,
    ...(providerDetail === undefined ? {} : { providerDetail }),
  };
}

/**
 * What an attempt's call reported of its failure, in the shape the retry table reads (the
 * provider's own word under `provider`, as the attempt's record has it).
 */
export function failedCallOf(
  failures: ReadonlyArray<Record<string, unknown>>,
  attemptId: string,
): FailedCall | undefined {
  const failure = [...failures].reverse().find((f) => f.attemptId === attemptId);
  if (!failure) return undefined;
  // A run continued from one before `providerDetail` holds the provider's word under `provider`.
  const detail = failure.providerDetail ?? failure.provider;
  return {
    code: failure.code,
    httpStatus: failure.httpStatus,
    provider: typeof detail === 'object' && detail !== null ? detail : undefined,
  };
}
