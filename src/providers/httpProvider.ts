import { RESPONSE_TOO_LARGE } from '../domain/certainty';
import { cappedResponse, responseTooLarge } from './boundedBody';
import {
  causeCode,
  isAmbiguousStatus,
  ProviderCallError,
  UNREACHABLE_CODES,
  type ProviderErrorDetail,
} from './callErrors';
import { reportedCost } from './pricing';
import {
  lateResultTimeoutMs,
  maxResponseBytes,
  type HttpProviderConfig,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
  type StatusLookup,
} from './provider';
import { replayWindowOf, type ReplayAnswer, type ReplayLookup } from './replay';
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

/** What an error body says of itself (`{"error": {"type", "code"}}`, as Stripe words it). */
function errorOfBody(body: unknown): Pick<ProviderErrorDetail, 'type' | 'code'> {
  const error = (body as { error?: { type?: unknown; code?: unknown } } | null | undefined)?.error;
  return {
    ...(typeof error?.type === 'string' ? { type: error.type } : {}),
    ...(typeof error?.code === 'string' ? { code: error.code } : {}),
  };
}

/** An answer whose status was 2xx and whose body was read whole. */
interface ReadAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * A generic JSON-over-HTTP provider for jobs with side effects (a charge, a write): the job
 * input is POSTed with the attempt id as its idempotency key; an optional status URL or search
 * answers, later, whether that key was ever processed, and a replay lookup sends the very same
 * request again inside the provider's key window.
 */
export class HttpProvider implements Provider {
  readonly replay: ReplayLookup | undefined;

  constructor(
    readonly config: HttpProviderConfig,
    private readonly apiKey: string | undefined,
  ) {
    const window = replayWindowOf(config);
    this.replay = window && {
      window,
      bytesOf: (input) => this.bytesOf(input),
      send: (attemptId, body, withinMs) => this.sendAgain(attemptId, body, withinMs),
    };
  }

  private headers(attemptId?: string): Record<string, string> {
    return {
      accept: 'application/json',
      ...(attemptId
        ? {
            'content-type': 'application/json',
            [(this.config.keyHeader ?? 'Idempotency-Key').toLowerCase()]: attemptId,
          }
        : {}),
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
    };
  }

  /** The bytes a call sends for this input: its JSON, as written once and kept. */
  private bytesOf(input: Record<string, unknown>): Uint8Array {
    return Buffer.from(JSON.stringify(input));
  }

  async call(request: ProviderRequest): Promise<ProviderResponse> {
    const timeout = AbortSignal.timeout(lateResultTimeoutMs(this.config));
    const answer = await this.post(
      request.attemptId,
      request.body ?? this.bytesOf(request.input),
      request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
    );
    const cost = this.config.cost && reportedCost(this.config.cost, answer.body);
    return { output: answer.body, ...(cost ? { cost } : {}) };
  }

  private async sendAgain(
    attemptId: string,
    body: Uint8Array,
    withinMs: number,
  ): Promise<ReplayAnswer> {
    const answer = await this.post(
      attemptId,
      body,
      AbortSignal.timeout(Math.max(1, Math.min(this.config.timeoutMs, withinMs))),
    );
    const cost = this.config.cost && reportedCost(this.config.cost, answer.body);
    return {
      status: answer.status,
      output: answer.body,
      replayed: answer.headers.get('idempotent-replayed') === 'true',
      ...(cost ? { cost } : {}),
    };
  }

  /** POSTs the bytes under the key; a 2xx read whole, or the ProviderCallError it comes to. */
  private async post(
    attemptId: string,
    bytes: Uint8Array,
    signal: AbortSignal,
  ): Promise<ReadAnswer> {
    let response: Response;
    try {
      response = await fetch(this.config.url, {
        method: 'POST',
        headers: this.headers(attemptId),
        body: bytes,
        signal,
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
      const detail = { ...errorOfBody(body), ...retryHints(response.headers) };
      throw new ProviderCallError(
        `provider answered HTTP ${response.status}`,
        isAmbiguousStatus(response.status) ? 'ambiguous' : 'definite',
        `http_${response.status}`,
        response.status,
        Object.keys(detail).length > 0 ? detail : undefined,
      );
    }
    return { status: response.status, headers: response.headers, body };
  }
  get lookupStatus(): ((attemptId: string) => Promise<StatusLookup>) | undefined {
    const template = this.config.statusUrl ?? this.config.searchUrl;
    if (!template) return undefined;
    const search = this.config.statusUrl === undefined;
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
      if (search) return searchAnswer(response.status, body);
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

/** A search's answer: 200 with a `data` list (empty: no record; else its first item); else unknown. */
function searchAnswer(status: number, body: unknown): StatusLookup {
  const found = (body as { data?: unknown } | undefined)?.data;
  if (status !== 200 || !Array.isArray(found))
    return { state: 'unknown', detail: `search answered HTTP ${status} without a list of records` };
  if (found.length === 0) return { state: 'not_found' };
  return { state: 'succeeded', output: found[0] };
}
