/** Counts the `?wait=` requests each owner holds open, and refuses past the limit. */
export class WaitLimiter {
  private readonly byOwner = new Map<string, number>();
  total = 0;

  constructor(readonly limit: number) {}

  /** A release function, or undefined when this owner already waits on `limit` requests. */
  enter(ownerId: string): (() => void) | undefined {
    const held = this.byOwner.get(ownerId) ?? 0;
    if (held >= this.limit) return undefined;
    this.byOwner.set(ownerId, held + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byOwner.get(ownerId) ?? 1) - 1;
      if (left === 0) this.byOwner.delete(ownerId);
      else this.byOwner.set(ownerId, left);
    };
  }
}
