import type { ServerResponse } from 'node:http';
import type { SimulatorRoute } from './faults';
import { sendJson } from './http';

/**
 * How each simulated API words its errors, as the real ones do:
 * - OpenAI: `{"error": {"message", "type", "param", "code"}}` and an `x-request-id` header;
 * - Anthropic: `{"type": "error", "error": {"type", "message"}}` and a `request-id` header, with
 *   the error type named by the status (529 is `overloaded_error`);
 * - the payment API: Stripe's shape, which is OpenAI's (`{"error": {"message", "type", …}}`).
 * Every error carries `x-should-retry`, the header both official SDKs obey over their own
 * judgement: `true` where they would retry by default (408, 409, 429, 5xx), `false` elsewhere.
 */

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export function shouldRetry(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export interface ErrorDetail {
  /** OpenAI's `type` (Anthropic's is derived from the status). */
  type?: string;
  param?: string | null;
  code?: string | null;
}

/** An error answer in the wire format of the API the route belongs to. */
export function providerError(
  res: ServerResponse,
  route: SimulatorRoute,
  status: number,
  message: string,
  detail: ErrorDetail = {},
  requestId = `req_${Math.random().toString(36).slice(2, 14)}`,
  extraHeaders: Record<string, string> = {},
): void {
  const headers = { 'x-should-retry': String(shouldRetry(status)), ...extraHeaders };
  if (route === 'messages') {
    sendJson(
      res,
      status,
      { type: 'error', error: { type: anthropicErrorType(status), message } },
      { ...headers, 'request-id': requestId },
    );
    return;
  }
  sendJson(
    res,
    status,
    {
      error: {
        message,
        type: detail.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
        param: detail.param ?? null,
        code: detail.code ?? null,
      },
    },
    { ...headers, 'x-request-id': requestId },
  );
}

/**
 * A `429` before any work, with the headers the real API sends beside it: `Retry-After` (and
 * OpenAI's `retry-after-ms`) when a wait is given, and the rate-limit counters at zero.
 */
export function rateLimited(
  res: ServerResponse,
  route: SimulatorRoute,
  retryAfterSeconds: number | undefined,
): void {
  const after: Record<string, string> =
    retryAfterSeconds === undefined
      ? {}
      : route === 'messages' ||
          route === 'charge' ||
          route === 'charge-status' ||
          route === 'charge-search'
        ? { 'retry-after': String(retryAfterSeconds) }
        : {
            'retry-after': String(retryAfterSeconds),
            'retry-after-ms': String(Math.round(retryAfterSeconds * 1000)),
          };
  const resetSeconds = retryAfterSeconds ?? 1;
  if (route === 'messages') {
    providerError(
      res,
      route,
      429,
      'Number of requests has exceeded your rate limit.',
      {},
      undefined,
      {
        ...after,
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-requests-reset': new Date(
          Date.now() + resetSeconds * 1000,
        ).toISOString(),
      },
    );
    return;
  }
  providerError(
    res,
    route,
    429,
    'Rate limit reached for requests. Please try again later.',
    { type: 'requests', code: 'rate_limit_exceeded' },
    undefined,
    {
      ...after,
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': `${resetSeconds}s`,
    },
  );
}
