import { RESPONSE_TOO_LARGE } from '../domain/certainty';
import { cappedResponse, responseTooLarge } from './boundedBody';
import { reportedCost } from './pricing';
import {
  causeCode,
  isAmbiguousStatus,
  lateResultTimeoutMs,
  maxResponseBytes,
  ProviderCallError,
  UNREACHABLE_CODES,
  type HttpProviderConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
  type StatusLookup,
} from './provider';
import { retryHints } from './retryHints';

/** Sorts a failed fetch into "nothing was sent" (definite) or "it may have been" (ambiguous). */
export function classifyFetchFailure(error: unknown): ProviderCallError {
  const code = causeCode(error);
  if (code && UNREACHABLE_CODES.has(code)) {
    return new ProviderCallError(`provider unreachable (${code})`, 'definite', 'unreachable');
  }
  const name = (error as Error).name;
  return new ProviderCallError(
    `request failed after it may have been sent (${code ?? name})`,
    'ambiguous',
    name === 'TimeoutError' ? 'timeout' : 'connection',
  );
}

/**
 * A generic JSON-over-HTTP provider for jobs with side effects (a charge, a write): the job
 * input is POSTed with the attempt id as Idempotency-Key, and an optional status URL answers,
 * later, whether that key was ever processed.
 */
export class HttpProvider implements Provider {
  constructor(
    readonly config: HttpProviderConfig,
    private readonly apiKey: string | undefined,
  ) {}

  private headers(attemptId?: string): Record<string, string> {
    return {
      accept: 'application/json',
      ...(attemptId ? { 'content-type': 'application/json', 'idempotency-key': attemptId } : {}),
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
    };
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    const timeout = AbortSignal.timeout(lateResultTimeoutMs(this.config));
    let response: Response;
    try {
      response = await fetch(this.config.url, {
        method: 'POST',
        headers: this.headers(request.attemptId),
        body: JSON.stringify(request.input),
        signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
      });
    } catch (error) {
      throw classifyFetchFailure(error);
    }
    let text: string | undefined;
    try {
      text = await cappedResponse(response, maxResponseBytes(this.config)).text();
    } catch (error) {
      const tooLarge = responseTooLarge(error);
      // A 2xx past the cap: what it means for the attempt is the certainty table's call.
      if (tooLarge && response.ok)
        throw new ProviderCallError(
          `provider answered HTTP ${response.status}, but ${tooLarge.message}`,
          'ambiguous',
          RESPONSE_TOO_LARGE,
          response.status,
        );
      // The answer was cut off: whether the work happened cannot be told from it, but a 2xx
      // status line says it may have (the certainty table's row for a 2xx not read whole).
      if (response.ok || isAmbiguousStatus(response.status)) {
        throw new ProviderCallError(
          `provider answered HTTP ${response.status}, and its body was cut off (${(error as Error).message})`,
          'ambiguous',
          'unreadable',
          response.status,
        );
      }
    }
    let body: unknown;
    try {
      body = text === undefined ? undefined : JSON.parse(text);
    } catch {
      // A whole body that is not JSON (a proxy's page in its place, say) tells nothing of the
      // work; a 2xx status line does, as one whose body was cut off (the certainty table's row
      // for a 2xx not read). Not a breach of the contract by the provider's own records: a page
      // in front of it says nothing of how it files work.
      if (response.ok || isAmbiguousStatus(response.status))
        throw new ProviderCallError(
          `provider answered HTTP ${response.status} with a body that is not JSON (${response.headers.get('content-type') ?? 'no content type'}, ${Buffer.byteLength(text ?? '')} bytes)`,
          'ambiguous',
          'unreadable',
          response.status,
        );
      body = undefined;
    }
    if (!response.ok) {
      const hints = retryHints(response.headers);
      throw new ProviderCallError(
        `provider answered HTTP ${response.status}`,
        isAmbiguousStatus(response.status) ? 'ambiguous' : 'definite',
        `http_${response.status}`,
        response.status,
        Object.keys(hints).length > 0 ? hints : undefined,
      );
    }
    const cost = this.config.cost && reportedCost(this.config.cost, body);
    return { output: body, ...(cost ? { cost } : {}) };
  }

  get lookupStatus(): ((attemptId: string) => Promise<StatusLookup>) | undefined {
    const template = this.config.statusUrl;
    if (!template) return undefined;
    return async (attemptId: string): Promise<StatusLookup> => {
      let response: Response;
      try {
        response = await fetch(template.replace('{key}', encodeURIComponent(attemptId)), {
          headers: this.headers(),
          signal: AbortSignal.timeout(this.config.timeoutMs),
        });
      } catch (error) {
        return { state: 'unknown', detail: `status lookup failed: ${(error as Error).message}` };
      }
      let body: unknown;
      try {
        body = await cappedResponse(response, maxResponseBytes(this.config)).json();
      } catch {
        // Not JSON, or over the cap: either way it says nothing about the key.
        body = undefined;
      }
      // The documented shapes: 200 with the record as JSON, 404 with a JSON error. Anything else
      // (an HTML 404 from a proxy or a wrong path, a 5xx, an empty body) says nothing about the key.
      if (response.status === 404 && body !== undefined) return { state: 'not_found' };
      if (response.status === 200 && body !== undefined)
        return { state: 'succeeded', output: body };
      return {
        state: 'unknown',
        detail:
          body === undefined
            ? `status lookup answered HTTP ${response.status} without a JSON body`
            : `status lookup answered HTTP ${response.status}`,
      };
    };
  }
}
