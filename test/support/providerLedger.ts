import type { SimulatorRoute } from '../../tools/simulator/faults';
import type { TestStack } from './stack';

/** Requests of a job's attempts that reached the simulator on a route (every one, faults too). */
export function requestsFor(stack: TestStack, jobId: string, route: SimulatorRoute = 'charge') {
  return stack.simulator
    .requests()
    .filter((r) => r.route === route && r.idempotencyKey.startsWith(`${jobId}:`));
}

/** Side effects the simulator performed for a job's attempts on a route (e.g. charges made). */
export function effectsFor(stack: TestStack, jobId: string, route: SimulatorRoute = 'charge') {
  return stack.simulator
    .ledger()
    .filter((e) => e.route === route && e.idempotencyKey.startsWith(`${jobId}:`));
}

/**
 * What the provider saw of a job on a route, in the provider's own terms: the attempt ids of the
 * requests that reached it, in arrival order (faulted and replayed ones too), and one entry per
 * time it really did the work (a key listed twice means it worked twice, i.e. charged twice).
 */
export function providerSaw(
  stack: TestStack,
  jobId: string,
  route: SimulatorRoute = 'charge',
): { requests: string[]; effects: string[] } {
  return {
    requests: requestsFor(stack, jobId, route).map((r) => r.idempotencyKey),
    effects: effectsFor(stack, jobId, route).flatMap((e) =>
      Array.from({ length: e.executions }, () => e.idempotencyKey),
    ),
  };
}
