import { readdirSync, readFileSync } from 'node:fs';
import { childPids } from '../../tools/stack/processes';

/** Linux's clock ticks per second for /proc/<pid>/stat times (USER_HZ, 100 on every Linux here). */
const TICKS_PER_SECOND = 100;

function stat(pid: number): { comm: string; cpuSeconds: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { comm, cpuSeconds: ticks / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** A process and all its descendants (a guardian and the program it runs, say). */
export function withDescendants(pid: number): number[] {
  return [pid, ...childPids(pid).flatMap(withDescendants)];
}

/** Every process of this name (PostgreSQL runs one per connection). */
export function processesNamed(comm: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => stat(pid)?.comm === comm);
}

/** CPU seconds of each process of each part, at one moment. */
export type CpuReading = Record<string, Record<number, number>>;

/**
 * CPU seconds each part of the machine used, by name. Parts are given as functions, so processes
 * that come and go (PostgreSQL's backends) are found afresh at each reading. A process that
 * ended between two readings takes its time with it, so a part's figure is a floor.
 */
export class CpuMeter {
  constructor(private readonly parts: Record<string, () => number[]>) {}

  read(): CpuReading {
    return Object.fromEntries(
      Object.entries(this.parts).map(([name, pids]) => [
        name,
        Object.fromEntries(pids().map((pid) => [pid, stat(pid)?.cpuSeconds ?? 0])),
      ]),
    );
  }

  /** CPU seconds of each part between two readings: processes alive at the second one. */
  static used(before: CpuReading, after: CpuReading): Record<string, number> {
    return Object.fromEntries(
      Object.entries(after).map(([name, pids]) => [
        name,
        Object.entries(pids).reduce(
          (sum, [pid, seconds]) => sum + seconds - (before[name]?.[Number(pid)] ?? 0),
          0,
        ),
      ]),
    );
  }

  /** CPU milliseconds per unit of work of each part between two readings. */
  static perUnit(before: CpuReading, after: CpuReading, units: number): Record<string, number> {
    return Object.fromEntries(
      Object.entries(CpuMeter.used(before, after)).map(([name, seconds]) => [
        name,
        Math.round(((seconds * 1000) / Math.max(1, units)) * 10) / 10,
      ]),
    );
  }
}
