/**
 * Faults the simulator can be told to inject, one request at a time, so tests can provoke
 * exactly the failure they pin: slow answers, hangs, failures before or after the side
 * effect, dropped connections, and outputs that break the contract.
 */
export type Fault =
  /**
   * Wait, then behave normally (the side effect happens after the wait), or as `then` says.
   * While it waits, a status lookup for the key says "still processing".
   */
  | { kind: 'delay'; ms: number; then?: Fault }
  /**
   * Wait until the test opens the named gate (`POST /_simulator/gates/<gate>`), then behave
   * normally or as `then` says: a late answer that comes exactly when the test wants it.
   * While it waits, a status lookup for the key says "still processing".
   */
  | { kind: 'hold'; gate: string; then?: Fault }
  /** Never answer (until the server shuts down); no side effect. */
  | { kind: 'hang' }
  /**
   * Answer with an error status before doing anything, in the provider's words or in `message`,
   * with `headers` besides the API's own (a `retry-after`, an `x-should-retry: false`).
   */
  | { kind: 'fail_before'; status: number; message?: string; headers?: Record<string, string> }
  /** Do the side effect, then answer with an error status. */
  | { kind: 'fail_after'; status: number }
  /** Drop the connection before doing anything. */
  | { kind: 'drop_before' }
  /** Do the side effect, then drop the connection without answering. */
  | { kind: 'drop_after' }
  /** Chat only: answer with text that is not JSON. */
  | { kind: 'malformed_output' }
  /** Chat only: answer with a top-level key the contract does not know. */
  | { kind: 'extra_key' }
  /** Chat only: answer with the right keys but values of the wrong type. */
  | { kind: 'wrong_types' }
  /**
   * Do the work, then answer success with these fields merged into the answer (for a charge, the
   * response body; for a chat model, its JSON output). What is recorded stays as it was, so a
   * status lookup answers the clean record unless its own fault says otherwise.
   */
  | { kind: 'answer_with'; merge: Record<string, unknown> }
  /** Do the work, send the status line and headers, then never send the body. */
  | { kind: 'stall_after_headers' }
  /**
   * Do the work, then answer success with the usual body padded by a top-level `padding` field
   * to `bytes` more bytes, chunked (no Content-Length); with `endless`, the body never ends after
   * them: only a reader that stops at its cap gets past such an answer.
   */
  | { kind: 'oversized_body'; bytes: number; endless?: boolean }
  /**
   * A provider that registers the key only when it gets round to the work: the request waits,
   * unregistered (a status lookup answers 404), until the first status lookup for its key has
   * been answered, and only then does the work and answers.
   */
  | { kind: 'register_after_status_lookup' }
  /**
   * Charge only: a provider that files the charge under its own id instead of our key. It does
   * the work and answers success, but its body says `"status": "pending"` (`answer: 'pending'`)
   * or names its own key (`answer: 'own_key'`), or its answer is lost on the way (`answer:
   * 'lost'`: the connection drops after the work); its status lookup by our key answers "no
   * record" for ever.
   */
  | { kind: 'files_under_own_id'; answer: 'pending' | 'own_key' | 'lost' }
  /**
   * Charge only: do the work, then answer 2xx with a body that cannot be read as the charge: an
   * HTML page a proxy put in its place (`not_json`), or the JSON cut off mid-body by a dropped
   * connection (`cut_off`). With `filesUnderOwnId`, the work is filed under the provider's own
   * id, as `files_under_own_id` does: its status lookup by our key answers "no record" for ever.
   */
  | { kind: 'unreadable_success'; body: 'not_json' | 'cut_off'; filesUnderOwnId?: boolean }
  /**
   * Charge only: answer as a provider whose record of this key has other parameters (Stripe's
   * `400 idempotency_error`), doing nothing.
   */
  | { kind: 'key_reused' }
  /** Chat only: the model writes on and on, so its answer always runs into the output cap. */
  | { kind: 'runs_long' }
  /** Chat only: the model declines (OpenAI's `refusal`, Anthropic's `stop_reason: "refusal"`). */
  | { kind: 'refuses' }
  /**
   * Chat only: the provider's content filter stops the answer part-way (OpenAI's
   * `finish_reason: "content_filter"`; Anthropic has no such reason and stops with its
   * `stop_reason: "refusal"`).
   */
  | { kind: 'content_filter' }
  /** Chat only: the model finishes normally having written nothing (empty content). */
  | { kind: 'empty_answer' }
  /** Too busy to take the request, before any work: Anthropic's 529 `overloaded_error`, else 503. */
  | { kind: 'overloaded' }
  /**
   * Over the rate limit, before any work: `429` as the real API sends it (OpenAI's
   * `rate_limit_exceeded` with `x-ratelimit-*`, Anthropic's `rate_limit_error` with
   * `anthropic-ratelimit-*`), with `Retry-After` in seconds when `retryAfterSeconds` is given
   * (and OpenAI's `retry-after-ms` beside it).
   */
  | { kind: 'rate_limited'; retryAfterSeconds?: number };

/**
 * `charge-status` is the status lookup by key (`GET /v1/charges/by-key/:key`), `charge-search`
 * the search (`GET /v1/charges/search?query=idempotency_key:'…'`), behind by its lag.
 */
export type SimulatorRoute = 'chat' | 'messages' | 'charge' | 'charge-status' | 'charge-search';

/** Whether a request on `route` asks for the provider's work: every route but the status lookup. */
export function doesWork(route: string): boolean {
  return route !== 'charge-status' && route !== 'charge-search';
}

export interface FaultRule {
  route: SimulatorRoute;
  /** Only requests for this model (chat). */
  model?: string;
  /** Only requests whose Idempotency-Key starts with this. */
  keyPrefix?: string;
  /** Only charges to this account: a rule for one job whose attempt ids are not known yet. */
  account?: string;
  /** How many matching requests it applies to; default 1. */
  times?: number;
  /**
   * Instead of a count: every matching request for this long from now ("answer 503 for the next
   * 20 s"), an outage that heals by itself.
   */
  forMs?: number;
  fault: Fault;
}

function accountOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && 'account' in body ? body.account : undefined;
}

export class FaultQueue {
  private readonly rules: Array<FaultRule & { remaining: number; until?: number }> = [];

  add(rule: FaultRule): void {
    this.rules.push({
      ...rule,
      remaining: rule.times ?? 1,
      ...(rule.forMs === undefined ? {} : { until: Date.now() + rule.forMs }),
    });
  }

  clear(): void {
    this.rules.length = 0;
  }

  /** The first rule matching this request, consumed once. */
  take(
    route: SimulatorRoute,
    request: { model?: string; idempotencyKey: string; body?: unknown },
  ): Fault | undefined {
    // Outages that have healed are gone.
    const now = Date.now();
    for (let i = this.rules.length - 1; i >= 0; i--)
      if ((this.rules[i]!.until ?? Infinity) <= now) this.rules.splice(i, 1);
    const index = this.rules.findIndex(
      (rule) =>
        rule.route === route &&
        (rule.model === undefined || rule.model === request.model) &&
        (rule.keyPrefix === undefined || request.idempotencyKey.startsWith(rule.keyPrefix)) &&
        (rule.account === undefined || accountOf(request.body) === rule.account),
    );
    const rule = this.rules[index];
    if (!rule) return undefined;
    if (rule.until !== undefined) return rule.fault;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.rules.splice(index, 1);
    return rule.fault;
  }
}
