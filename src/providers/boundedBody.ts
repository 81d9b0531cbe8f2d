import { causeChain } from '../domain/causeChain';

/** The fetch both providers' SDKs take as an option. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The answer's body went past the provider's cap (`maxResponseBytes`); the rest was not read. */
export class ResponseTooLarge extends Error {
  constructor(
    readonly limitBytes: number,
    readonly status: number,
  ) {
    super(
      `the answer body is over the provider's cap of ${limitBytes} bytes; the rest was not read`,
    );
    this.name = 'ResponseTooLarge';
  }
}

/** Statuses whose responses have no body (and that `new Response` refuses one for). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The same response with its body read through a counter: past `limitBytes` (or when its
 * Content-Length says it will be) reading fails with ResponseTooLarge and the rest is cancelled,
 * so an over-cap answer, even an endless one, is never buffered.
 */
export function cappedResponse(response: Response, limitBytes: number): Response {
  const source = response.body;
  if (!source || NO_BODY.has(response.status)) return response;
  const declared = Number(response.headers.get('content-length') ?? 0);
  const reader = source.getReader();
  let seen = 0;
  const tooLarge = (controller: ReadableStreamDefaultController<Uint8Array>): void => {
    const error = new ResponseTooLarge(limitBytes, response.status);
    controller.error(error);
    // Closes the connection; nothing waits for the rest to drain.
    reader.cancel(error).catch(() => undefined);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (declared > limitBytes) return tooLarge(controller);
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen += value.byteLength;
      if (seen > limitBytes) return tooLarge(controller);
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const capped = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(capped, 'url', { value: response.url });
  return capped;
}

/** A fetch for the providers' SDKs whose responses are capped (see cappedResponse). */
export function cappedFetch(limitBytes: number): Fetch {
  return async (input, init) => cappedResponse(await fetch(input, init), limitBytes);
}

/** The ResponseTooLarge an error is, or was caused by (an SDK may wrap it). */
export function responseTooLarge(error: unknown): ResponseTooLarge | undefined {
  for (const current of causeChain(error)) if (current instanceof ResponseTooLarge) return current;
  return undefined;
}
