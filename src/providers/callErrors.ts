/**
 * What a provider call's failure is: definite (nothing was done) or ambiguous (it may have been),
 * in the provider's own words, and how a status or a network error is sorted into one of them.
 */
import { causeChain } from '../domain/causeChain';

/**
 * `definite`: the request certainly had no effect (refused before any work), so another
 * attempt elsewhere is safe. `ambiguous`: it may have taken effect, so the attempt is unknown.
 */
export type FailureCertainty = 'definite' | 'ambiguous';

export class ProviderCallError extends Error {
  constructor(
    message: string,
    readonly certainty: FailureCertainty,
    readonly code: string,
    readonly httpStatus?: number,
    /** What the provider said about it: its error type/code/param and its `x-should-retry`. */
    readonly detail?: ProviderErrorDetail,
  ) {
    super(message);
    this.name = 'ProviderCallError';
  }
}

export interface ProviderErrorDetail {
  type?: string;
  code?: string;
  param?: string;
  /** The provider's `x-should-retry` header: its own word on whether trying again may help. */
  shouldRetry?: boolean;
  /** How long the provider asked us to wait (`Retry-After`, `retry-after-ms`), from its answer. */
  retryAfterMs?: number;
}

/** Statuses that leave open whether the work was done; every other 4xx refused it before doing it. */
export function isAmbiguousStatus(status: number): boolean {
  return status === 408 || status === 409 || status >= 500;
}

/**
 * Network errors that mean the request never reached the provider: no connection was ever made
 * (refused, no route, name not found, or no answer to the connection attempt itself).
 */
export const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function causeCode(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
