import type { SimulatorRoute } from '../../tools/simulator/faults';
import { eventually } from './polling';
import { providerSaw } from './providerLedger';
import type { TestStack } from './stack';

/**
 * Where one attempt's provider call stands, as our database and the provider each see it: the
 * attempt's state and whether its call's end was written, the requests of the job that reached
 * the provider and the work it did (its answer comes only after the work).
 */
export interface CallSnapshot {
  attempt: { state: string; callEnded: boolean } | undefined;
  requests: string[];
  effects: string[];
}

/** The snapshot of a call that is in flight: running, received, not yet worked or answered. */
export function inFlight(attemptId: string): CallSnapshot {
  return {
    attempt: { state: 'running', callEnded: false },
    requests: [attemptId],
    effects: [],
  };
}

/** Reads where an attempt's call stands (see CallSnapshot). */
export async function callSnapshot(
  stack: TestStack,
  attemptId: string,
  route: SimulatorRoute = 'charge',
): Promise<CallSnapshot> {
  const jobId = attemptId.slice(0, attemptId.lastIndexOf(':'));
  // The provider first: a request it has received was marked running before it left, so the
  // row read next cannot be older than the request.
  const saw = providerSaw(stack, jobId, route);
  const { rows } = await stack.pool.query<{ state: string; call_ended: boolean }>(
    'SELECT state, call_ended_at IS NOT NULL AS call_ended FROM attempts WHERE id = $1',
    [attemptId],
  );
  const row = rows[0];
  return {
    attempt: row && { state: row.state, callEnded: row.call_ended },
    ...saw,
  };
}

/**
 * Waits until the attempt's request has reached the provider, and returns the snapshot then.
 * With the request held at a closed gate (`hold`), that is `inFlight(attemptId)` and it stays
 * so until the gate opens; the test asserts it, acts (a kill, a parent's end), asserts it again,
 * and only then opens the gate.
 */
export function untilRequestReceived(
  stack: TestStack,
  attemptId: string,
  route: SimulatorRoute = 'charge',
  timeoutMs = 20_000,
): Promise<CallSnapshot> {
  return eventually(
    () => callSnapshot(stack, attemptId, route),
    (snapshot) => snapshot.requests.includes(attemptId),
    timeoutMs,
  );
}
