import { RESPONSE_TOO_LARGE } from '../domain/certainty';
import { responseTooLarge } from './boundedBody';
import {
  causeCode,
  isAmbiguousStatus,
  ProviderCallError,
  UNREACHABLE_CODES,
  type ProviderErrorDetail,
} from './callErrors';
import { redactSecretShapes } from './redaction';
import { retryHints } from './retryHints';

/** The error classes both official SDKs (OpenAI's and Anthropic's) share in shape. */
export interface SdkErrorClasses {
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIError: abstract new (...args: never[]) => Error & {
    status?: number;
    error?: unknown;
    headers?: unknown;
  };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/**
 * What the provider itself said: its message (OpenAI's `error.message`, Anthropic's nested
 * `error.error.message`), its error type, code and parameter, and `x-should-retry`.
 */
export function providerSaid(error: { error?: unknown; headers?: unknown }): {
  message?: string;
  detail: ProviderErrorDetail;
} {
  const body = isObject(error.error) ? error.error : undefined;
  const inner = isObject(body?.error) ? body.error : body;
  const headers = error.headers as { get?: (name: string) => string | null } | undefined;
  const detail: ProviderErrorDetail = {
    ...(text(inner?.type) ? { type: text(inner?.type) } : {}),
    ...(text(inner?.code) ? { code: text(inner?.code) } : {}),
    ...(text(inner?.param) ? { param: text(inner?.param) } : {}),
    ...retryHints(
      typeof headers?.get === 'function'
        ? { get: (name) => headers.get?.(name) ?? null }
        : undefined,
    ),
  };
  // A provider that echoes part of a wrong key must not get it into our records or logs (the
  // registry masks the configured keys themselves too).
  const said = text(inner?.message);
  const message = said === undefined ? undefined : redactSecretShapes(said).slice(0, 500);
  return { ...(message ? { message } : {}), detail };
}

/**
 * Sorts an SDK failure into "certainly had no effect" (definite: safe to try elsewhere) or
 * "may have had an effect" (ambiguous: the attempt is unknown).
 */
export function classifySdkError(error: unknown, sdk: SdkErrorClasses): ProviderCallError {
  // The SDK read a 2xx body through our capped fetch and it went past the cap (an error
  // status's body is read leniently by the SDK, so that status decides below).
  const tooLarge = responseTooLarge(error);
  const success = tooLarge !== undefined && tooLarge.status >= 200 && tooLarge.status < 300;
  if (tooLarge && success && !(error instanceof sdk.APIError)) {
    return new ProviderCallError(
      `provider answered HTTP ${tooLarge.status}, but ${tooLarge.message}`,
      'ambiguous',
      RESPONSE_TOO_LARGE,
      tooLarge.status,
    );
  }
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
    const said = providerSaid(error);
    return new ProviderCallError(
      `provider answered HTTP ${status}${said.message ? `: ${said.message}` : ''}`,
      isAmbiguousStatus(status) ? 'ambiguous' : 'definite',
      `http_${status}`,
      status,
      said.detail,
    );
  }
  return new ProviderCallError(
    `unexpected provider error: ${(error as Error)?.message ?? String(error)}`,
    'ambiguous',
    'unexpected',
  );
}
