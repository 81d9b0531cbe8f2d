/**
 * A receiver's memory of the `webhook-id`s it has handled. onejob sends a delivery again, with
 * the same id, until the receiver answers 2xx, so a receiver whose answer was lost (or that
 * runs twice behind a balancer) sees an event more than once; handling it once is the
 * receiver's part. Mark the id after verifying the signature, before handling the event.
 */

/** Where handled ids are kept. Give one that every replica of the receiver shares, if you run several. */
export interface WebhookIdStore {
  /**
   * Keeps `id` until `expiresAtMs` (milliseconds since the epoch) unless it is already kept
   * and not yet expired. True when it was added now, false when it was already there. Two
   * concurrent calls with one id must not both answer true (a unique key does it in a database).
   */
  add(id: string, expiresAtMs: number): boolean | Promise<boolean>;
  /** Forgets `id`, so that the next delivery with it is handled. */
  delete(id: string): void | Promise<void>;
}

/** The default store: this process's memory, bounded in count; the oldest ids go first. */
export class MemoryWebhookIdStore implements WebhookIdStore {
  /** Id → when it expires; a Map keeps insertion order, which is expiry order for one age. */
  private readonly expiries = new Map<string, number>();
  private readonly maxIds: number;
  private readonly now: () => number;

  constructor(
    options: {
      /** The most ids kept; past it the oldest is forgotten. Default 100,000 (a few MB). */
      maxIds?: number;
      /** The clock, in milliseconds. Default: now. */
      now?: () => number;
    } = {},
  ) {
    this.maxIds = options.maxIds ?? 100_000;
    if (!Number.isSafeInteger(this.maxIds) || this.maxIds < 1)
      throw new RangeError('maxIds must be a positive whole number');
    this.now = options.now ?? Date.now;
  }

  add(id: string, expiresAtMs: number): boolean {
    const now = this.now();
    for (const [kept, expiry] of this.expiries) {
      if (expiry > now) break;
      this.expiries.delete(kept);
    }
    const expiry = this.expiries.get(id);
    if (expiry !== undefined && expiry > now) return false;
    this.expiries.delete(id);
    this.expiries.set(id, expiresAtMs);
    for (const kept of this.expiries.keys()) {
      if (this.expiries.size <= this.maxIds) break;
      this.expiries.delete(kept);
    }
    return true;
  }

  delete(id: string): void {
    this.expiries.delete(id);
  }

  /** How many ids are kept now. */
  get size(): number {
    return this.expiries.size;
  }
}

export interface WebhookDeduplicatorOptions {
  /** Where ids are kept. Default: a MemoryWebhookIdStore of this process. */
  store?: WebhookIdStore;
  /**
   * How long an id is remembered. Default 3 days and an hour: onejob tries a delivery for at
   * most 3 days, so every retry of it arrives while its id is kept.
   */
  maxAgeSeconds?: number;
  /** The clock, in milliseconds. Default: now. */
  now?: () => number;
}

/** Says whether a `webhook-id` was handled before, and remembers it. */
export class WebhookDeduplicator {
  private readonly store: WebhookIdStore;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: WebhookDeduplicatorOptions = {}) {
    this.now = options.now ?? Date.now;
    this.store = options.store ?? new MemoryWebhookIdStore({ now: this.now });
    const maxAgeSeconds = options.maxAgeSeconds ?? (3 * 24 + 1) * 3600;
    if (!(maxAgeSeconds > 0)) throw new RangeError('maxAgeSeconds must be above 0');
    this.maxAgeMs = maxAgeSeconds * 1000;
  }

  /**
   * True when `webhookId` was seen before (and not forgotten or expired): answer 2xx and do
   * nothing more. False the first time, and it is remembered from now on.
   */
  async seenBefore(webhookId: string | null | undefined): Promise<boolean> {
    if (typeof webhookId !== 'string' || webhookId.length === 0)
      throw new RangeError('a webhook-id is required (verify the webhook first)');
    return !(await this.store.add(webhookId, this.now() + this.maxAgeMs));
  }

  /** Forgets `webhookId`: call it when handling the event failed, so that its retry is handled. */
  async forget(webhookId: string): Promise<void> {
    await this.store.delete(webhookId);
  }
}
