/**
 * Turns what PostgreSQL wrote before it gave up into one line: its own reason (the FATAL or
 * PANIC message, with its DETAIL and HINT) and what to do about the causes a newcomer meets.
 */
const REASON = /\b(FATAL|PANIC|ERROR):\s+(.*)$/;
const EXTRA = /\b(DETAIL|HINT):\s+(.*)$/;

/** PostgreSQL's reason from its log, as one line; undefined when it logged none. */
export function postgresReason(log: string): string | undefined {
  const lines = log.split('\n').map((line) => line.trim());
  const at = lines.findIndex((line) => /\b(FATAL|PANIC):/.test(line));
  const start = at >= 0 ? at : lines.findIndex((line) => REASON.test(line));
  if (start < 0) return undefined;
  const parts = [`${REASON.exec(lines[start]!)![1]}: ${REASON.exec(lines[start]!)![2]}`];
  for (const line of lines.slice(start + 1)) {
    const extra = EXTRA.exec(line);
    if (!extra) break;
    parts.push(`${extra[1]}: ${extra[2]}`);
  }
  return parts.join(' ');
}

/** What to do about the causes we know, for the folder PostgreSQL ran on. */
export function postgresRemedy(reason: string, dataDir: string): string | undefined {
  if (/lock file "postmaster\.pid" already exists/.test(reason))
    return `if no PostgreSQL runs on ${dataDir} any more, delete ${dataDir}/postmaster.pid and start again`;
  if (/has invalid permissions/.test(reason)) return `run chmod 700 ${dataDir} and start again`;
  if (/has wrong ownership|Permission denied/i.test(reason))
    return `give ${dataDir} to the user PostgreSQL runs as (chown -R), or set ONEJOB_STATE_DIR to a folder of your own`;
  if (/shared memory|semaphore/i.test(reason))
    return 'the system is out of shared memory or semaphores: stop other PostgreSQL servers or raise the kernel limits (kernel.shmmax, kernel.sem)';
  if (/could not (bind|create any TCP\/IP)|Address already in use/i.test(reason))
    return 'another server took the port: start again (a new port is chosen each time)';
  return undefined;
}

/** The one-line failure message of embedded PostgreSQL. */
export function embeddedPostgresFailure(options: {
  log: string;
  dataDir: string;
  logFile: string;
  fallback: string;
}): string {
  const reason = postgresReason(options.log);
  const remedy = reason ? postgresRemedy(reason, options.dataDir) : undefined;
  return [
    `embedded PostgreSQL did not start: ${reason ?? options.fallback.replace(/\s+/g, ' ').trim()}`,
    ...(remedy ? [`; ${remedy}`] : []),
    ` (its log: ${options.logFile})`,
  ].join('');
}
