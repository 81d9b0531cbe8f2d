import type { Journal } from './journal';
import type { JobView, KeyRecord, World } from './world';

/** Where a request goes: the load balancer, or one API replica directly. */
export type Via = 'lb' | 'api0' | 'api1';

export interface Endpoints {
  apiUrl: string;
  apiReplicaUrls: string[];
}

export interface Answer {
  status: number;
  body: unknown;
  problem?: string;
  replayed: boolean;
  /** The Retry-After header of a refusal, if it had one. */
  retryAfter?: string;
}

/** The last segment of a problem type URI (`…/problems/idempotency-key-reuse`). */
function problemName(body: unknown): string | undefined {
  const type = (body as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type.split('/').pop() : undefined;
}

/** Answers a client retries with the same key, as the typed client does. */
export function isRetryable(answer: Answer): boolean {
  if (answer.status === 0 || answer.status >= 500) return true;
  if (answer.status === 408 || answer.status === 429) return true;
  return answer.status === 409 && answer.problem !== 'idempotency-key-reuse';
}

/**
 * The campaign's HTTP client: every exchange goes into the journal with its operation, owner,
 * key and status (0 when no answer came), and every job an answer shows is observed.
 */
export class ChaosClient {
  constructor(
    private readonly endpoints: Endpoints,
    private readonly journal: Journal,
    private readonly world: World,
  ) {}

  base(via: Via): string {
    if (via === 'lb') return this.endpoints.apiUrl;
    return this.endpoints.apiReplicaUrls[via === 'api0' ? 0 : 1] ?? this.endpoints.apiUrl;
  }

  async send(
    op: number,
    kind: string,
    method: string,
    path: string,
    options: {
      token: string;
      via?: Via;
      owner?: string;
      key?: string;
      /** A JSON body: a value to serialize, or the exact text to send. */
      body?: unknown;
      headers?: Record<string, string>;
      timeoutMs?: number;
    },
  ): Promise<Answer> {
    const via = options.via ?? 'lb';
    const started = Date.now();
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.token}`,
      ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
      ...options.headers,
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    let answer: Answer;
    let error: string | undefined;
    try {
      const response = await fetch(`${this.base(via)}${path}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON (nginx's own error pages): kept as text
      }
      answer = {
        status: response.status,
        body: parsed,
        problem: response.ok ? undefined : problemName(parsed),
        replayed: response.headers.get('idempotent-replayed') === 'true',
        ...(response.headers.has('retry-after')
          ? { retryAfter: response.headers.get('retry-after')! }
          : {}),
      };
    } catch (caught) {
      error = (caught as Error).message;
      answer = { status: 0, body: null, replayed: false };
    }
    const job = answer.status >= 200 && answer.status < 300 ? asJob(answer.body) : undefined;
    if (job) this.world.observe(job, started - this.journal.started);
    this.journal.exchange({
      at: started - this.journal.started,
      ms: Date.now() - started,
      op,
      kind,
      method,
      path,
      via,
      owner: options.owner,
      key: options.key,
      status: answer.status,
      ...(answer.problem ? { problem: answer.problem } : {}),
      ...(answer.status >= 400 ? { detail: errorDetail(answer.body) } : {}),
      ...(job ? { jobId: job.id } : {}),
      ...(answer.replayed ? { replayed: true } : {}),
      ...(answer.retryAfter ? { retryAfter: answer.retryAfter } : {}),
      ...(error ? { error } : {}),
    });
    return answer;
  }

  /**
   * POST /v1/jobs as a well-behaved client does: the same key again after no answer, a 5xx, a
   * 408/429 or a 409 "in progress", with growing pauses, until an answer it may not retry.
   */
  async create(
    op: number,
    kind: string,
    record: KeyRecord,
    options: { token: string; via: Via; body?: string; maxTries?: number },
  ): Promise<Answer> {
    const body = options.body ?? JSON.stringify(record.intent);
    let pause = 200;
    const maxTries = options.maxTries ?? 10;
    for (let tries = 1; ; tries++) {
      const answer = await this.send(op, kind, 'POST', '/v1/jobs', {
        token: options.token,
        via: options.via,
        owner: record.owner,
        key: record.key,
        body,
      });
      const job = answer.status === 200 || answer.status === 201 ? asJob(answer.body) : undefined;
      if (job) this.world.named(record, job.id, job.workflowId, answer.status === 201);
      if (!isRetryable(answer) || tries >= maxTries) return answer;
      record.retried = true;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 5_000);
    }
  }
}

function errorDetail(body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  return (typeof detail === 'string' ? detail : (JSON.stringify(body) ?? '')).slice(0, 300);
}

/** A job representation (creates leave out the attempts; reads carry them). */
export function asJob(body: unknown): JobView | undefined {
  const job = body as Partial<JobView> | null;
  if (!job || typeof job !== 'object' || typeof job.id !== 'string') return undefined;
  if (typeof job.status !== 'string' || typeof job.workflowId !== 'string') return undefined;
  if (job.attempts !== undefined && !Array.isArray(job.attempts)) return undefined;
  return { ...job, attempts: job.attempts ?? [] } as JobView;
}
