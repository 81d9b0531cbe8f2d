/** Called by our own child processes: stop when the parent goes away, however it went. */
export function exitWithParent(shutdown: () => Promise<void> | void): void {
  if (!process.send) return;
  process.on('disconnect', () => void shutdown());
  // The link itself must not keep the process alive once its work is done.
  process.channel?.unref();
}
