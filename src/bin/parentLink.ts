/** Called by our own child processes: stop when the parent goes away, however it went. */
export function exitWithParent(shutdown: () => Promise<void> | void): void {
  if (!process.send) return;
  process.on('disconnect', () => void shutdown());
  // The link itself must not keep the process alive once its work is done.
  process.channel?.unref();
}

/** What a service tells a supervising parent (npm start, the tests) about its start. */
export type StartupMessage =
  /** The step the start is in now, so a parent that waits too long can say where it stands. */
  | { starting: string }
  /** Everything is up: jobs will be picked up, requests answered. */
  | { ready: true };

/** Tells a supervising parent how the start goes; nothing without one. */
export function tellParent(message: StartupMessage): void {
  process.send?.(message);
}
