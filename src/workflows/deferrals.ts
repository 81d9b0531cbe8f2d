/** Until when a provider the plan passed by takes no new attempt, and why. */
export interface Deferral {
  until: string;
  reason: string;
}

/**
 * Providers the plan passed by because they took no new attempt (a cooldown, an open breaker):
 * once nothing else is left, the job waits for the earliest. Carried across runs.
 */
export class Deferrals {
  private readonly byProvider: Map<string, Deferral>;

  constructor(carried?: Record<string, Deferral>) {
    this.byProvider = new Map(Object.entries(carried ?? {}));
  }

  get size(): number {
    return this.byProvider.size;
  }

  /** The provider took no new attempt: the plan passes it by until `until`. */
  defer(provider: string, deferral: Deferral): void {
    this.byProvider.set(provider, deferral);
  }

  /** The wait for the provider is over, or it took an attempt: the plan may ask it again. */
  over(provider: string): void {
    this.byProvider.delete(provider);
  }

  /** The deferred provider that takes attempts again first. */
  earliest(): ({ provider: string } & Deferral) | undefined {
    let earliest: ({ provider: string } & Deferral) | undefined;
    for (const [provider, { until, reason }] of this.byProvider)
      if (!earliest || Date.parse(until) < Date.parse(earliest.until))
        earliest = { provider, until, reason };
    return earliest;
  }

  /** What the next run is handed, when anything is deferred. */
  carried(): Record<string, Deferral> | undefined {
    return this.byProvider.size > 0 ? Object.fromEntries(this.byProvider) : undefined;
  }
}
