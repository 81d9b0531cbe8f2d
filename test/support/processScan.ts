import { readdirSync, readFileSync } from 'node:fs';

/** Pids of live processes whose command line or environment mention `marker`. */
export function processesMentioning(marker: string): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      const status = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/^\d+ \(.*\) Z/.test(status)) continue; // a zombie has already exited
      const environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (command.includes(marker) || environment.includes(marker)) found.push({ pid, command });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

export async function waitUntil(
  check: () => boolean,
  timeoutMs: number,
  intervalMs = 200,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return check();
}
