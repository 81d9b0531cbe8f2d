/**
 * Whether a Temporal run in this status (the client's name for it) is still open. A run an
 * operator paused (Temporal 1.30 and later) is open, not closed: it goes on where it stopped once
 * unpaused, so nothing may start a run in its place or treat its job as abandoned meanwhile.
 */
export function isOpenRunStatus(status: string): boolean {
  return status === 'RUNNING' || status === 'PAUSED';
}
