/**
 * Continuous certification's rule, as pure functions: the Wilson score lower bound of a
 * provider's rejection rate, and whether it passed the threshold. The bound, not the rate, is
 * compared: a few rejections among a few calls are not evidence, many among many are.
 */

/** The settings of the rule (ONEJOB_DECERTIFY_*, docs/configuration.md). */
export interface RejectionRule {
  /** The rate the lower bound must pass; undefined: the rule is off. */
  threshold?: number;
  /** One-sided confidence of the bound, e.g. 0.95. */
  confidence: number;
  /** At most this many latest answered calls are read. */
  windowCalls: number;
  /** None older than this. */
  windowMs: number;
  /** No decision on fewer calls than this. */
  minCalls: number;
}

// Not quick to act by default: a lost fallback fails jobs that would have failed over to it, so
// a handful of broken answers (a test's faults, a bad minute) must not cost a provider its place.
export const DEFAULT_REJECTION_RULE = {
  threshold: 0.2,
  confidence: 0.95,
  windowCalls: 100,
  windowMs: 3_600_000,
  minCalls: 20,
} as const satisfies RejectionRule;

/**
 * The standard normal quantile (Acklam's rational approximation, relative error below
 * 1.2e-9): the z of a one-sided confidence.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`a probability strictly between 0 and 1, got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972,
    -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734,
    4.374664141464968, 2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const tail = (q: number): number =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < low) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - low) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** The Wilson score interval's lower bound of `rejected` out of `calls`, at `confidence`. */
export function wilsonLowerBound(rejected: number, calls: number, confidence: number): number {
  if (calls <= 0) return 0;
  const z = normalQuantile(confidence);
  const p = rejected / calls;
  const z2n = (z * z) / calls;
  const centre = p + z2n / 2;
  const margin = z * Math.sqrt((p * (1 - p)) / calls + z2n / (4 * calls));
  // Never above the rate it bounds (rounding aside), never below 0.
  return Math.min(p, Math.max(0, (centre - margin) / (1 + z2n)));
}

/** The rule's verdict on a window: lost (with its bound), or kept. */
export function judgeWindow(
  rule: RejectionRule,
  window: { calls: number; rejected: number },
): { lost: boolean; lowerBound: number } {
  const lowerBound = wilsonLowerBound(window.rejected, window.calls, rule.confidence);
  const lost =
    rule.threshold !== undefined &&
    window.calls >= rule.minCalls &&
    window.rejected > 0 &&
    lowerBound > rule.threshold;
  return { lost, lowerBound };
}
