/**
 * A span of time as configs write it: milliseconds as a number, or a count and a unit
 * ("24h", "90m", "30s", "250ms", "7d"), so a provider's documented key window reads as it is
 * documented.
 */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The pattern a duration string matches (checked where configs are read). */
export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** A duration in milliseconds; throws on a string that is not one. */
export function durationMs(duration: Duration): number {
  if (typeof duration === 'number') return duration;
  const match = DURATION_PATTERN.exec(duration.trim());
  if (!match) throw new Error(`"${duration}" is not a duration (e.g. 24h, 90m, 30s, 250ms)`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}
