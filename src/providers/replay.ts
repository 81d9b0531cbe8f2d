/**
 * A replay lookup: a lost answer looked up by sending the attempt's first request again, byte
 * for byte, under its key, inside the provider's key window (what its config says, and what a
 * provider adapter offers for it).
 */
import type { Money } from '../domain/cost';
import { durationMs, type Duration } from '../domain/durations';

/** A replay lookup's window: the provider's key retention, and the margin kept short of it. */
export interface ReplayLookupConfig {
  /** How long the provider keeps a key's stored outcome: "24h", or milliseconds. */
  keyWindow: Duration;
  /**
   * Kept short of the window: covers clock skew between PostgreSQL and the provider and the
   * replay's own time on the wire; a replay that has not left by then is given up.
   */
  margin: Duration;
}

/** A provider's replay window in milliseconds, when it looks lost answers up by replay. */
export function replayWindowOf(config: {
  replay?: ReplayLookupConfig | undefined;
}): { keyWindowMs: number; marginMs: number } | undefined {
  if (!config.replay) return undefined;
  return {
    keyWindowMs: durationMs(config.replay.keyWindow),
    marginMs: durationMs(config.replay.margin),
  };
}

/** Sending an attempt's first request again, byte for byte, under its key. */
export interface ReplayLookup {
  window: { keyWindowMs: number; marginMs: number };
  /** The bytes a call sends for this input: kept before they leave, replayed as they are. */
  bytesOf(input: Record<string, unknown>): Uint8Array;
  /**
   * Sends them again; answers as a call does (throws ProviderCallError). Given up, unsent, once
   * `withinMs` has passed: a replay must not reach the provider past its key window.
   */
  send(attemptId: string, body: Uint8Array, withinMs: number): Promise<ReplayAnswer>;
}

/** What a replay brought back: the stored answer's status and body, and whether it says it is one. */
export interface ReplayAnswer {
  status: number;
  output: unknown;
  /** The provider marked it a replay of a stored answer (`Idempotent-Replayed: true`). */
  replayed: boolean;
  cost?: Money;
}
