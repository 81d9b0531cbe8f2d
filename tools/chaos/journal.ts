import { appendFileSync, writeFileSync } from 'node:fs';
import type { LinkCounts, LinkFault } from './linkProxy';

/** One HTTP exchange (or Temporal call) the campaign made, as the client saw it. */
export interface Exchange {
  /** Milliseconds since the campaign started. */
  at: number;
  ms: number;
  op: number;
  kind: string;
  method: string;
  path: string;
  via: string;
  owner?: string;
  key?: string;
  /** The HTTP status, or 0 when no answer came (connection refused or reset, timeout). */
  status: number;
  problem?: string;
  /** The problem's detail (or the start of any other error body). */
  detail?: string;
  jobId?: string;
  replayed?: boolean;
  retryAfter?: string;
  error?: string;
}

/** A process fault and how long the part it hit took to come back. */
export interface ProcessFault {
  kind:
    | 'kill_worker'
    | 'kill_worker_after_admission'
    | 'kill_api'
    | 'restart_temporal'
    | 'restart_postgres'
    | 'restart_temporal_postgres'
    | 'partition';
  /** The process, or for a partition the link (`worker-0→postgres`). */
  target: string;
  /** A partition: how the link broke, how long, and what each side saw. */
  partition?: Partition;
  at: number;
  /** What the fault waited for before it struck (the attempt whose admission it followed). */
  after?: string;
  /** When the part answered again (ms since start); undefined while it is still down. */
  backAt?: number;
  error?: string;
}

/** A link broken for a while and healed, as the campaign saw it. */
export interface Partition {
  fault: LinkFault;
  heldMs: number;
  /** What the proxy saw while the link was broken: connections and bytes each way, and the bytes it held at the heal. */
  during: LinkCounts;
  /** The near side's `/readyz` just before the heal (status and body), or that it did not answer. */
  nearSideSaw: string;
  /** How long after the heal the near side said it was ready again, without a restart. */
  readyAfterHealMs?: number;
}

/** A provider answering every call with one failure for a while: a storm or an outage. */
export interface FaultWindow {
  /** `rate_limit_storm#41`: its kind and the operation that started it. */
  id: string;
  kind: string;
  provider: string;
  /** Milliseconds since the campaign started, as `Exchange.at`. */
  from: number;
  to: number;
}

/**
 * The campaign's log: every operation, exchange, fault and process fault, in order, written as
 * JSON lines to a file as it goes (so a run that dies still leaves its trail), and kept in memory
 * for the checks.
 */
export class Journal {
  readonly started = Date.now();
  readonly exchanges: Exchange[] = [];
  readonly processFaults: ProcessFault[] = [];
  readonly providerFaults = new Map<string, number>();
  readonly faultWindows: FaultWindow[] = [];
  readonly operations = new Map<string, number>();

  constructor(readonly file: string) {
    writeFileSync(file, '');
  }

  now(): number {
    return Date.now() - this.started;
  }

  write(entry: Record<string, unknown>): void {
    appendFileSync(this.file, `${JSON.stringify({ t: this.now(), ...entry })}\n`);
  }

  operation(op: number, kind: string, detail: Record<string, unknown>): void {
    this.operations.set(kind, (this.operations.get(kind) ?? 0) + 1);
    this.write({ event: 'op', op, kind, ...detail });
  }

  exchange(exchange: Exchange): void {
    this.exchanges.push(exchange);
    this.write({ event: 'exchange', ...exchange });
  }

  providerFault(kind: string, detail: Record<string, unknown>): void {
    this.providerFaults.set(kind, (this.providerFaults.get(kind) ?? 0) + 1);
    this.write({ event: 'provider-fault', kind, ...detail });
  }

  /** A storm or an outage: counted with the provider faults, and its window kept. */
  faultWindow(window: FaultWindow, detail: Record<string, unknown>): void {
    this.faultWindows.push(window);
    this.providerFault(window.kind, { ...detail, window });
  }

  processFault(fault: ProcessFault): ProcessFault {
    this.processFaults.push(fault);
    this.write({ event: 'process-fault', ...fault });
    return fault;
  }

  processBack(fault: ProcessFault): void {
    this.write({ event: 'process-back', ...fault });
  }

  /**
   * Every exchange that mentions one of these strings (a job id, a key), and every fault window
   * a needle names by its id, in the order they began.
   */
  linesAbout(needles: string[], limit = 40): Array<Record<string, unknown>> {
    const mentioned = (entry: object): boolean => {
      const text = JSON.stringify(entry);
      return needles.some((needle) => needle && text.includes(needle));
    };
    const lines: Array<{ at: number; line: Record<string, unknown> }> = [];
    for (const exchange of this.exchanges)
      if (mentioned(exchange)) lines.push({ at: exchange.at, line: { ...exchange } });
    for (const window of this.faultWindows)
      if (needles.includes(window.id))
        lines.push({ at: window.from, line: { event: 'provider-fault-window', ...window } });
    lines.sort((a, b) => a.at - b.at);
    return lines.slice(-limit).map(({ line }) => line);
  }
}
