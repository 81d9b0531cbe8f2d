import type { BenchEnvironment } from './environment';

/** One line of the headline table: one measure of ours beside its baseline, and its goal. */
export interface Comparison {
  row: string;
  measure: string;
  ours: number;
  baseline?: number;
  unit: string;
  /** ours ÷ baseline, or as the goal reads it (e.g. a speed-up); absent without a baseline. */
  ratio?: number;
  goal: string;
  met?: boolean;
}

export interface LatencyCurve {
  chart: string;
  series: string;
  points: Array<{ percentile: number; ms: number }>;
}

export interface RateCurve {
  chart: string;
  series: string;
  perSecond: number[];
}

export interface ScenarioResult {
  comparisons: Comparison[];
  /** Set when the row could not finish: the report keeps the other rows. */
  error?: string;
  /** Everything else worth printing: profiles, counts, sizes. */
  details: Record<string, unknown>;
  latencyCurves?: LatencyCurve[];
  rateCurves?: RateCurve[];
}

export interface BenchContext {
  env: BenchEnvironment;
  /** The CI smoke run: every row, briefly, to show the suite still works. */
  smoke: boolean;
  log(line: string): void;
}

export interface Scenario {
  name: string;
  run(context: BenchContext): Promise<ScenarioResult>;
}

export const round2 = (value: number): number => Math.round(value * 100) / 100;

/** Polls until `done` says so; fails after `timeoutMs` with what it was waiting for. */
export async function waitUntil(
  what: string,
  done: () => Promise<boolean>,
  timeoutMs = 600_000,
  lastSeen?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting until ${what}${lastSeen ? ` (last seen: ${lastSeen()})` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
