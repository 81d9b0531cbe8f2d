import { createHash } from 'node:crypto';
import type { Fault, SimulatorRoute } from './faults';

/**
 * What the simulated providers did, so tests can count how many times something really happened:
 * every request in arrival order, and per route and Idempotency-Key the work done and the replays
 * answered. As at the real providers, the chat APIs do the work for every request they receive,
 * whatever its key; only the charge API is idempotent by key.
 */

export interface LedgerEntry {
  route: SimulatorRoute;
  idempotencyKey: string;
  model?: string;
  /** Every request that arrived with this key, whatever became of it (faults and replays too). */
  requests: number;
  /**
   * Times the work was actually done: every request that got past its fault on the chat APIs
   * (they do not deduplicate), at most one per key on the charge API.
   */
  executions: number;
  /** Requests the charge API answered from its ledger instead of doing the work again. */
  replays: number;
  /**
   * Tokens the chat APIs said they served for this key, summed over every execution (each one
   * is billed): what a bill from this provider would count.
   */
  tokensServed?: { input: number; output: number };
}

/** A line of the charge API's export (Ledger.chargeReport). */
export interface ChargeReportEntry {
  id: string;
  idempotencyKey: string;
  status: 'succeeded' | 'failed';
  amountCents?: number;
  currency?: string;
  account?: string;
  created: string;
}

/** One request as it reached the simulator, in arrival order. */
export interface RequestRecord {
  route: SimulatorRoute;
  idempotencyKey: string;
  model?: string;
  at: string;
  /** The fault it met, if any. */
  fault?: Fault['kind'];
  /** The request body as sent (chat and charge APIs; the latest 1,000 only), for tests to check. */
  body?: unknown;
  /** SHA-256 of the body's bytes as they came (charge API): a replay's are the first's. */
  bodyDigest?: string;
  /** The status it was refused with before any work (a malformed request), if it was. */
  refusedWith?: number;
  /**
   * The status line the simulator sent back, once it sent one; absent while the request is
   * held and for one never answered (its connection dropped, or it hangs).
   */
  answered?: number;
}

interface StoredEntry {
  route: SimulatorRoute;
  idempotencyKey: string;
  model?: string;
  executions: number;
  replays: number;
  response: unknown;
  fingerprint: string;
  tokensServed?: { input: number; output: number };
  /** When the work was done: the key is forgotten a key window later, and searchable a lag later. */
  storedAt: number;
  /** What the first request was answered, when not its success (a 5xx after the work, say). */
  answered?: { status: number; body: unknown };
}

/**
 * How the charge API keeps its keys, set per test (`PUT /_simulator/settings`): how long a key's
 * stored answer is kept (Stripe: at least 24 h; a repeat after that is a new charge), and how far
 * its search lags its writes (Stripe: usually under a minute).
 */
export interface ChargeSettings {
  keyWindowMs: number;
  searchLagMs: number;
}

export const DEFAULT_CHARGE_SETTINGS: ChargeSettings = {
  keyWindowMs: 24 * 3_600_000,
  searchLagMs: 0,
};

/** The token counts a chat answer reports, in either API's shape; undefined for other answers. */
function tokensIn(response: unknown): { input: number; output: number } | undefined {
  const usage = (response as { usage?: Record<string, unknown> } | null)?.usage;
  if (!usage) return undefined;
  const input = usage.prompt_tokens ?? usage.input_tokens;
  const output = usage.completion_tokens ?? usage.output_tokens;
  return typeof input === 'number' && typeof output === 'number' ? { input, output } : undefined;
}

/** A request as the ledger knows it; the fingerprint tells a repeat from a key reused otherwise. */
export interface LedgerRequest {
  idempotencyKey: string;
  model?: string;
  fingerprint: string;
  body?: unknown;
  bodyDigest?: string;
}

/** How many of the latest requests keep their body in the log. */
const BODIES_KEPT = 1_000;

/** Routes that, like Stripe, answer a repeated key from their ledger instead of working again. */
const IDEMPOTENT_BY_KEY: ReadonlySet<SimulatorRoute> = new Set<SimulatorRoute>(['charge']);

/** Where a route's record of a key is kept. */
export function ledgerKey(route: SimulatorRoute, key: string): string {
  return `${route}:${key}`;
}

export class Ledger {
  private readonly entries = new Map<string, StoredEntry>();
  private readonly log: RequestRecord[] = [];
  /** Keys whose request arrived and is being worked on (a status lookup says "processing"). */
  readonly pending = new Set<string>();
  /** Keys whose work was filed under the provider's own id: a lookup by them finds no record. */
  readonly filedUnderOwnId = new Set<string>();
  readonly charges: ChargeSettings = { ...DEFAULT_CHARGE_SETTINGS };

  /** Note a request as it arrives, before anything is done with it; the note itself is returned. */
  record(request: RequestRecord): RequestRecord {
    this.log.push(request);
    // Bodies are for checking recent requests; a long-running simulator keeps only the last ones.
    const old = this.log[this.log.length - 1 - BODIES_KEPT];
    if (old) delete old.body;
    return request;
  }

  requests(): RequestRecord[] {
    return [...this.log];
  }

  /** The response recorded for this key, if the work was done and the key is still kept. */
  response(slot: string): { response: unknown } | undefined {
    const entry = this.entries.get(slot);
    return entry && !this.forgotten(entry) ? entry : undefined;
  }

  /** A key idempotent by its route is forgotten once its key window has passed. */
  private forgotten(entry: StoredEntry): boolean {
    return (
      IDEMPOTENT_BY_KEY.has(entry.route) && Date.now() - entry.storedAt >= this.charges.keyWindowMs
    );
  }

  /** What a replay of this key is answered, when its first answer was not its success. */
  storeAnswer(slot: string, status: number, body: unknown): void {
    const entry = this.entries.get(slot);
    if (entry) entry.answered = { status, body };
  }

  /** The first answer stored for a key, when it was not the success (a replay answers it again). */
  storedAnswer(slot: string): { status: number; body: unknown } | undefined {
    return this.entries.get(slot)?.answered;
  }

  /** The charges a search finds for a key: those written at least the search's lag ago. */
  searchable(route: SimulatorRoute, key: string): unknown[] {
    const entry = this.entries.get(ledgerKey(route, key));
    if (!entry || this.forgotten(entry) || this.filedUnderOwnId.has(ledgerKey(route, key)))
      return [];
    return Date.now() - entry.storedAt >= this.charges.searchLagMs ? [entry.response] : [];
  }

  /**
   * Do the work for a request, or, on a route idempotent by key, answer a key seen before from
   * the ledger and count the replay. `conflict` when the key was used before with other
   * parameters.
   */
  execute(
    route: SimulatorRoute,
    request: LedgerRequest,
    work: () => unknown,
  ): { response: unknown; replayed: boolean } | 'conflict' {
    const slot = ledgerKey(route, request.idempotencyKey);
    const previous = this.entries.get(slot);
    // Past the key window the key is forgotten: the same request is a new charge, as at Stripe.
    if (previous && IDEMPOTENT_BY_KEY.has(route) && !this.forgotten(previous)) {
      if (previous.fingerprint !== request.fingerprint) return 'conflict';
      previous.replays += 1;
      return { response: previous.response, replayed: true };
    }
    const response = work();
    const served = tokensIn(response);
    const before = previous?.tokensServed;
    this.entries.set(slot, {
      route,
      idempotencyKey: request.idempotencyKey,
      model: request.model,
      executions: (previous?.executions ?? 0) + 1,
      replays: previous?.replays ?? 0,
      response,
      fingerprint: request.fingerprint,
      storedAt: Date.now(),
      ...(served || before
        ? {
            tokensServed: {
              input: (before?.input ?? 0) + (served?.input ?? 0),
              output: (before?.output ?? 0) + (served?.output ?? 0),
            },
          }
        : {}),
    });
    return { response, replayed: false };
  }

  /**
   * The charge API's own export of what it did, as a provider's dashboard exports it: every
   * charge made (under whatever id it was filed, with the key it came with), and every key whose
   * requests were all refused with no charge made (`failed`). A key never received is absent.
   */
  chargeReport(): ChargeReportEntry[] {
    const made: ChargeReportEntry[] = [...this.entries.values()]
      .filter((entry) => entry.route === 'charge')
      .map((entry) => {
        const charge = entry.response as Record<string, unknown>;
        return {
          id: String(charge.id),
          idempotencyKey: entry.idempotencyKey,
          status: 'succeeded',
          amountCents: Number(charge.amountCents),
          currency: String(charge.currency),
          account: String(charge.account),
          created: new Date(entry.storedAt).toISOString(),
        };
      });
    const refused = new Map<string, RequestRecord>();
    for (const request of this.log)
      if (
        request.route === 'charge' &&
        !this.entries.has(ledgerKey('charge', request.idempotencyKey)) &&
        (request.answered ?? request.refusedWith ?? 0) >= 400 &&
        !refused.has(request.idempotencyKey)
      )
        refused.set(request.idempotencyKey, request);
    return [
      ...made,
      ...[...refused.values()].map((request) => {
        const body = (request.body ?? {}) as Record<string, unknown>;
        return {
          id: `ch_failed_${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24)}`,
          idempotencyKey: request.idempotencyKey,
          status: 'failed' as const,
          ...(typeof body.amountCents === 'number' ? { amountCents: body.amountCents } : {}),
          ...(typeof body.currency === 'string' ? { currency: body.currency } : {}),
          ...(typeof body.account === 'string' ? { account: body.account } : {}),
          created: request.at,
        };
      }),
    ];
  }

  /** Per route and key: requests received, work done, replays answered. */
  entriesSeen(): LedgerEntry[] {
    return [...this.entries.values()].map(
      ({ route, idempotencyKey, model, executions, replays, tokensServed }) => ({
        route,
        idempotencyKey,
        ...(model === undefined ? {} : { model }),
        ...(tokensServed ? { tokensServed } : {}),
        requests: this.log.filter((r) => r.route === route && r.idempotencyKey === idempotencyKey)
          .length,
        executions,
        replays,
      }),
    );
  }
}
