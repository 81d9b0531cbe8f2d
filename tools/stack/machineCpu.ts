import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * How busy the machine's cores were over a stretch of time, from Linux's /proc/stat: the
 * suite's time is bounded below by its CPU work over the cores, so `npm test` prints both. The
 * figures are the whole machine's (anything else running counts too).
 */
export interface CpuSample {
  /** Core-seconds spent on anything but idling or waiting for disk, since boot. */
  busySeconds: number;
  at: number;
}

/** Linux counts /proc/stat in USER_HZ ticks, 100 a second on every architecture it exports. */
const TICKS_PER_SECOND = 100;

/** Now, or undefined where /proc/stat cannot be read (not Linux). */
export function sampleCpu(): CpuSample | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"; guest time is
  // already inside user and nice.
  const fields = stat.split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  if (fields.length < 5 || fields.some((field) => !Number.isFinite(field))) return undefined;
  const total = fields.reduce((sum, field) => sum + field, 0);
  const idle = fields[3]! + fields[4]!;
  return { busySeconds: (total - idle) / TICKS_PER_SECOND, at: Date.now() };
}

/** "1,412 core-seconds busy, 1.83 of 2 cores on average", or '' when either sample is missing. */
export function describeCpu(from: CpuSample | undefined, to: CpuSample | undefined): string {
  if (!from || !to || to.at <= from.at) return '';
  const busy = to.busySeconds - from.busySeconds;
  const cores = busy / ((to.at - from.at) / 1000);
  return `${Math.round(busy).toLocaleString('en-US')} core-seconds busy, ${cores.toFixed(2)} of ${cpus().length} cores on average`;
}
