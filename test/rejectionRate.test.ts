import { judgeWindow, normalQuantile, wilsonLowerBound } from '../src/domain/rejectionRate';

const RULE = {
  threshold: 0.1,
  confidence: 0.95,
  windowCalls: 100,
  windowMs: 3_600_000,
  minCalls: 10,
};

test('the normal quantile of a one-sided confidence is the textbook z', () => {
  expect(normalQuantile(0.95)).toBeCloseTo(1.6449, 4);
  expect(normalQuantile(0.975)).toBeCloseTo(1.96, 3);
  expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
  expect(normalQuantile(0.001)).toBeCloseTo(-3.0902, 4);
});

test('the Wilson lower bound stays below the rate and tightens as the calls grow', () => {
  // 3 of 10 and 30 of 100: the same rate, a surer bound.
  const few = wilsonLowerBound(3, 10, 0.95);
  const many = wilsonLowerBound(30, 100, 0.95);
  expect(few).toBeLessThan(0.3);
  expect(many).toBeLessThan(0.3);
  expect(many).toBeGreaterThan(few);
  expect(many).toBeCloseTo(0.2307, 3);
  expect(wilsonLowerBound(0, 50, 0.95)).toBe(0);
});

test('a provider loses eligibility only when the bound passes the threshold on enough calls', () => {
  // Two refusals in five calls: too few calls to decide anything.
  expect(judgeWindow(RULE, { calls: 5, rejected: 2 }).lost).toBe(false);
  // 20 % of 100 is evidence; 10 % of 100 is not (its bound is below 10 %).
  expect(judgeWindow(RULE, { calls: 100, rejected: 20 }).lost).toBe(true);
  expect(judgeWindow(RULE, { calls: 100, rejected: 10 }).lost).toBe(false);
  // Off: never.
  const { threshold: _off, ...off } = RULE;
  expect(judgeWindow(off, { calls: 100, rejected: 90 }).lost).toBe(false);
});
