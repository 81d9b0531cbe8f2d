/**
 * How many webhook tries one worker process has out at once: in all, and for any one owner, so
 * that one owner's endpoints cannot take every socket of the process, nor every try of it. A
 * round that finds no slot for its owner within a short wait gives its slot in Temporal back
 * (the round fails, retryably, and Temporal's backoff brings it again) instead of holding it.
 */
export class WebhookSendSlots {
  private taken = 0;
  private readonly takenByOwner = new Map<string, number>();
  private waiters: Array<() => void> = [];

  constructor(
    readonly perProcess: number,
    readonly perOwner: number,
  ) {}

  /**
   * Up to `wanted` slots for the owner's tries, at least one; none when none came free within
   * `waitMs`. Each slot taken is given back with `give`.
   */
  async take(ownerId: string, wanted: number, waitMs: number): Promise<number> {
    const giveUpAt = Date.now() + waitMs;
    for (;;) {
      const ownerTaken = this.takenByOwner.get(ownerId) ?? 0;
      const free = Math.min(wanted, this.perProcess - this.taken, this.perOwner - ownerTaken);
      if (free > 0) {
        this.taken += free;
        this.takenByOwner.set(ownerId, ownerTaken + free);
        return free;
      }
      const left = giveUpAt - Date.now();
      if (left <= 0) return 0;
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  give(ownerId: string, count: number): void {
    if (count <= 0) return;
    this.taken -= count;
    const left = (this.takenByOwner.get(ownerId) ?? 0) - count;
    if (left > 0) this.takenByOwner.set(ownerId, left);
    else this.takenByOwner.delete(ownerId);
    // Every waiter looks again, in the order they came: a slot of another owner may fit them.
    const woken = this.waiters;
    this.waiters = [];
    for (const wake of woken) wake();
  }

  /** Tries out now: in all, and the owners' (for metrics and tests). */
  inUse(): { total: number; byOwner: ReadonlyMap<string, number> } {
    return { total: this.taken, byOwner: this.takenByOwner };
  }
}
