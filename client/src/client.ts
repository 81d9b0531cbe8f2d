import { randomUUID } from 'node:crypto';
import { isIPv4 } from 'node:net';
import type {
  Attempt,
  CreatedWebhookEndpoint,
  CreateJobBody,
  CreateWebhookEndpointBody,
  Job,
  JobPage,
  JobStatus,
  ListInclusion,
  SecretRotation,
  WebhookDelivery,
  WebhookEndpoint,
} from './types';

/**
 * A typed HTTP client for backend services. Its retries are safe by construction: every
 * retry of a create carries the same Idempotency-Key, so however many times a request is
 * sent, it is one job. Its types come from the API's OpenAPI document; it needs nothing but
 * Node's own fetch and crypto.
 */

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  [extension: string]: unknown;
}

/** The API answered with a problem document (RFC 9457). */
export class OneJobProblemError extends Error {
  constructor(
    readonly problem: Problem,
    /** False when the server said retrying cannot help (`x-should-retry: false`). */
    readonly retryable: boolean,
  ) {
    super(`${problem.title}${problem.detail ? `: ${problem.detail}` : ''} (${problem.type})`);
    this.name = 'OneJobProblemError';
  }

  get status(): number {
    return this.problem.status;
  }
}

export interface OneJobClientOptions {
  baseUrl: string;
  token: string;
  /** Retries after the first try, for network errors, 408, 409 (unless refused), 429 and 5xx. Default 4. */
  maxRetries?: number;
  /** First backoff; doubles each retry, with jitter, capped at 5 s. Default 200 ms. */
  initialBackoffMs?: number;
  /** Per-request timeout. Default 30 s. */
  timeoutMs?: number;
  /**
   * The longest `Retry-After` this client waits out before retrying. A longer one (an owner's
   * create bucket that refills slowly) is given to the caller at once as the problem. Default 30 s.
   */
  maxRetryAfterMs?: number;
  /**
   * Lets `baseUrl` be plain `http://` to a host other than this machine. Off by default: the
   * token would cross the network readable by anyone on the path. `http://` to loopback
   * (`localhost`, `127.0.0.0/8`, `[::1]`) is always allowed.
   */
  allowPlainHttp?: boolean;
  fetch?: typeof fetch;
}

/** The most of a refusal's body the client reads; the rest is never downloaded. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** True for a URL host that is this machine by definition, never a name another host could answer. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/\.$/, '');
  if (host === 'localhost' || host === '[::1]') return true;
  // The URL parser has already made every IPv4 spelling (127.1, 0x7f.1) dotted decimal.
  return isIPv4(host) && host.startsWith('127.');
}

/** `baseUrl` without its trailing slashes, once it is one this client may send a token to. */
function checkedBaseUrl(baseUrl: string, allowPlainHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`onejob-client: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`onejob-client: baseUrl must be https (or http), not ${url.protocol}`);
  if (url.protocol === 'http:' && !allowPlainHttp && !isLoopback(url.hostname))
    throw new TypeError(
      `onejob-client: refusing plain http to ${url.host}: the token would travel unencrypted. ` +
        'Use https, or set allowPlainHttp: true if this network is trusted.',
    );
  return baseUrl.replace(/\/+$/, '');
}

/**
 * At most `limit` bytes of a body, as text; a longer body is cut there and its download
 * cancelled, so a misbehaving server or proxy cannot make the client buffer without end.
 */
async function boundedText(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  try {
    while (!cut) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - size;
      cut = value.byteLength > room;
      const kept = cut ? value.subarray(0, room) : value;
      chunks.push(kept);
      size += kept.byteLength;
    }
  } finally {
    if (cut) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type CreateJobInput = CreateJobBody & {
  /** The identity of this intent. Generated when omitted; pass your own to make your own retries safe too. */
  idempotencyKey?: string;
};

export interface CreatedJob {
  job: Job;
  /** True when the server already had this job (a replay of an earlier create). */
  replayed: boolean;
  idempotencyKey: string;
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export class OneJobClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: OneJobClientOptions) {
    this.baseUrl = checkedBaseUrl(options.baseUrl, options.allowPlainHttp === true);
    this.fetchImpl = options.fetch ?? fetch;
  }

  async createJob(request: CreateJobInput): Promise<CreatedJob> {
    const idempotencyKey = request.idempotencyKey ?? randomUUID();
    // HTTP drops leading and trailing spaces of header values, so such a key would not arrive as sent.
    if (!/^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/.test(idempotencyKey)) {
      throw new RangeError(
        'idempotencyKey must be 1-255 printable ASCII characters, not starting or ending with a space',
      );
    }
    const { idempotencyKey: _key, ...body } = request;
    const response = await this.send('POST', '/v1/jobs', {
      body,
      headers: { 'idempotency-key': idempotencyKey },
    });
    return {
      job: (await response.json()) as Job,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      idempotencyKey,
    };
  }

  async getJob(id: string, options: { waitSeconds?: number } = {}): Promise<Job> {
    const query = options.waitSeconds ? `?wait=${options.waitSeconds}` : '';
    const response = await this.send('GET', `/v1/jobs/${encodeURIComponent(id)}${query}`, {
      timeoutMs: (options.waitSeconds ?? 0) * 1000 + (this.options.timeoutMs ?? 30_000),
    });
    return (await response.json()) as Job;
  }

  /** Long-polls until the job is succeeded, failed or cancelled, or `timeoutMs` passes (then returns it as it is). */
  async waitForJob(id: string, options: { timeoutMs?: number } = {}): Promise<Job> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const remaining = Math.ceil((deadline - Date.now()) / 1000);
      const job = await this.getJob(id, { waitSeconds: Math.max(0, Math.min(60, remaining)) });
      if (['succeeded', 'failed', 'cancelled'].includes(job.status) || Date.now() >= deadline)
        return job;
    }
  }

  /** A page of jobs; `include` adds their input or result (the page is then bounded in bytes). */
  async listJobs(
    options: {
      status?: JobStatus;
      limit?: number;
      cursor?: string;
      include?: ListInclusion[];
    } = {},
  ): Promise<JobPage> {
    const query = new URLSearchParams();
    if (options.status) query.set('status', options.status);
    if (options.limit) query.set('limit', String(options.limit));
    if (options.cursor) query.set('cursor', options.cursor);
    if (options.include?.length) query.set('include', options.include.join(','));
    const suffix = query.size > 0 ? `?${query}` : '';
    const response = await this.send('GET', `/v1/jobs${suffix}`);
    return (await response.json()) as JobPage;
  }

  /**
   * Try again, or use the fallback `provider`: a new attempt under the same job. Refused (a
   * OneJobProblemError, 409) while an attempt may still take effect or once the job has ended.
   * Sent again only when the API said nothing happened (429, 503): a lost answer may hide an
   * attempt that started, so a network error is the caller's to judge (read the job).
   */
  async retryJob(id: string, options: { provider?: string } = {}): Promise<Attempt> {
    const body = options.provider === undefined ? {} : { provider: options.provider };
    const response = await this.send('POST', `/v1/jobs/${encodeURIComponent(id)}/attempts`, {
      body,
      retry: 'nothing-happened',
    });
    return (await response.json()) as Attempt;
  }

  /**
   * Cancels the job: a call still out is abandoned (and still reconciled). A job that has
   * ended is a OneJobProblemError (409 job-terminal) naming its status and the winning attempt.
   * Sent again only when the API said nothing happened (429, 503), like retryJob.
   */
  async cancelJob(id: string, options: { reason?: string } = {}): Promise<Job> {
    const body = options.reason === undefined ? {} : { reason: options.reason };
    const response = await this.send('POST', `/v1/jobs/${encodeURIComponent(id)}/cancel`, {
      body,
      retry: 'nothing-happened',
    });
    return (await response.json()) as Job;
  }

  /**
   * Registers a webhook endpoint for your jobs' events. The answer carries its signing secret,
   * shown only here: keep it for verifyWebhook. Not idempotent, so sent again only when the API
   * said nothing happened (429, 503); after a network error, list the endpoints to see.
   */
  async createWebhookEndpoint(body: CreateWebhookEndpointBody): Promise<CreatedWebhookEndpoint> {
    const response = await this.send('POST', '/v1/webhooks', { body, retry: 'nothing-happened' });
    return (await response.json()) as CreatedWebhookEndpoint;
  }

  /** Your endpoints, oldest first: every page (an owner has at most a few dozen). */
  async listWebhookEndpoints(): Promise<WebhookEndpoint[]> {
    return this.everyPage<WebhookEndpoint>('/v1/webhooks', 'endpoints');
  }

  async getWebhookEndpoint(id: string): Promise<WebhookEndpoint> {
    const response = await this.send('GET', `/v1/webhooks/${encodeURIComponent(id)}`);
    return (await response.json()) as WebhookEndpoint;
  }

  /**
   * Deletes an endpoint: nothing more is sent to it, and what waited for it is abandoned. A
   * second delete is a OneJobProblemError (404), so it is sent again only when nothing happened.
   */
  async deleteWebhookEndpoint(id: string): Promise<void> {
    await this.send('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`, {
      retry: 'nothing-happened',
    });
  }

  /** Turns an endpoint on again (one that answered 410 was turned off): events from now on reach it. */
  async enableWebhookEndpoint(id: string): Promise<WebhookEndpoint> {
    const response = await this.send('POST', `/v1/webhooks/${encodeURIComponent(id)}/enable`);
    return (await response.json()) as WebhookEndpoint;
  }

  /**
   * A new signing secret, without a gap: the old one keeps signing beside it until
   * `previousSecretExpiresInSeconds` (default a day) has passed. Each call makes a secret, so it
   * is sent again only when nothing happened.
   */
  async rotateWebhookSecret(
    id: string,
    options: { previousSecretExpiresInSeconds?: number } = {},
  ): Promise<SecretRotation> {
    const response = await this.send(
      'POST',
      `/v1/webhooks/${encodeURIComponent(id)}/secret-rotations`,
      { body: options, retry: 'nothing-happened' },
    );
    return (await response.json()) as SecretRotation;
  }

  /** A job's webhook deliveries, in the order they are sent, each with every try: every page. */
  async listWebhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    return this.everyPage<WebhookDelivery>(
      `/v1/jobs/${encodeURIComponent(jobId)}/webhook-deliveries`,
      'deliveries',
    );
  }

  /** The items of a paged list, page after page until `nextCursor` is null. */
  private async everyPage<Item>(path: string, key: string): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const response = await this.send('GET', `${path}${query}`);
      const page = (await response.json()) as Record<string, unknown> & {
        nextCursor?: string | null;
      };
      items.push(...((page[key] as Item[] | undefined) ?? []));
      cursor = page.nextCursor ?? null;
    } while (cursor !== null);
    return items;
  }

  /** Sends one request, retrying what may safely be retried; throws OneJobProblemError for a final problem. */
  private async send(
    method: string,
    path: string,
    options: {
      body?: unknown;
      headers?: Record<string, string>;
      timeoutMs?: number;
      /**
       * `all` (default): what may safely be sent again. `nothing-happened`: only answers that
       * say the request had no effect (429, 503), for requests that are not idempotent.
       */
      retry?: 'all' | 'nothing-happened';
    } = {},
  ): Promise<Response> {
    const maxRetries = this.options.maxRetries ?? 4;
    let backoff = this.options.initialBackoffMs ?? 200;
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      let networkError: unknown;
      try {
        response = await this.fetchImpl(`${this.baseUrl}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.options.token}`,
            accept: 'application/json, application/problem+json',
            ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...options.headers,
          },
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(options.timeoutMs ?? this.options.timeoutMs ?? 30_000),
        });
      } catch (error) {
        networkError = error;
      }
      if (response?.ok) return response;

      let problem: Problem | undefined;
      let retryable = true;
      if (response) {
        const text = await boundedText(response, MAX_ERROR_BODY_BYTES);
        try {
          problem = JSON.parse(text) as Problem;
        } catch {
          problem = {
            type: 'about:blank',
            title: response.statusText || 'HTTP error',
            status: response.status,
            detail: text.slice(0, 500),
          };
        }
        retryable =
          (options.retry === 'nothing-happened'
            ? response.status === 429 || response.status === 503
            : isRetryableStatus(response.status)) &&
          response.headers.get('x-should-retry') !== 'false';
      } else if (options.retry === 'nothing-happened') {
        // The request may have arrived and acted: the caller decides, knowing that.
        retryable = false;
      }
      const retryAfter = Number(response?.headers.get('retry-after'));
      const askedWait = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 0;
      const tooLong = askedWait > (this.options.maxRetryAfterMs ?? 30_000);
      if (!retryable || attempt >= maxRetries || tooLong) {
        if (problem) throw new OneJobProblemError(problem, retryable);
        throw networkError;
      }
      const wait = askedWait > 0 ? askedWait : backoff * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, wait));
      backoff = Math.min(backoff * 2, 5_000);
    }
  }
}
