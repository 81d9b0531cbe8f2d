/**
 * A model that drifts: `sim-drifts` answers well until a chosen moment, then breaks its contract
 * (a refusal, which no format the API enforces rules out) on a chosen share of its answers.
 * Which answers break is a fixed pattern, not a draw: with rate r, the n-th answer after the
 * moment (n = 0, 1, …) breaks when ⌈(n+1)·r⌉ > ⌈n·r⌉, so the first one breaks and every
 * stretch of answers breaks its share, rounded. Tests get the same run every time.
 */
import type { Fault } from './faults';

export const DRIFTING_MODEL = 'sim-drifts';

export interface DriftSettings {
  /** The share of answers that break, from 0 to 1. */
  rate: number;
  /** How long after these settings (or the simulator's start) the breaking begins. */
  afterMs: number;
}

/** By default it breaks 30 % of its answers from minute 2 of the simulator's life. */
export const DEFAULT_DRIFT: DriftSettings = { rate: 0.3, afterMs: 120_000 };

/** Drift settings a request asks for, checked: undefined when it asks for none. */
export function driftSettings(body: unknown): DriftSettings | undefined {
  const asked = (body ?? {}) as { drift?: Partial<DriftSettings> };
  if (asked.drift === undefined) return undefined;
  const { rate, afterMs } = asked.drift;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1))
    throw new Error('drift.rate must be a share from 0 to 1');
  if (afterMs !== undefined && (!Number.isInteger(afterMs) || afterMs < 0))
    throw new Error('drift.afterMs must be a whole number of milliseconds');
  return { rate, afterMs: afterMs ?? 0 };
}

export class Drift {
  private rateInThousandths = 0;
  private startsAt = 0;
  /** Answers given since the breaking began. */
  private served = 0;

  constructor(settings: DriftSettings = DEFAULT_DRIFT) {
    this.configure(settings);
  }

  /** New settings: the moment counts from now, and the pattern starts over. */
  configure(settings: DriftSettings): void {
    this.rateInThousandths = Math.round(settings.rate * 1000);
    this.startsAt = Date.now() + settings.afterMs;
    this.served = 0;
  }

  /** What `sim-drifts` does to this answer: a refusal when it is one of those that break. */
  profile(): Fault | undefined {
    if (Date.now() < this.startsAt) return undefined;
    const n = this.served++;
    // Whole numbers only: ⌈k·r⌉ with r in thousandths.
    const breaks = (k: number): number => Math.ceil((k * this.rateInThousandths) / 1000);
    return breaks(n + 1) > breaks(n) ? { kind: 'refuses' } : undefined;
  }
}
