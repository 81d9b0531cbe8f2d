import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson';
import type { JobMode } from './job';

/** The parts of a create request that make up the intent (owner and key identify it). */
export interface IntentForFingerprint {
  type: string;
  input: Record<string, unknown>;
  /** As the client sent it: `null` when it left the choice to the service's default plan. */
  providers: string[] | null;
  mode: JobMode;
}

/** The identity of what was asked for: a hash of the canonical intent, never of the raw bytes. */
export function requestFingerprint(intent: IntentForFingerprint): string {
  const canonical = canonicalJson({
    type: intent.type,
    input: intent.input,
    providers: intent.providers,
    mode: intent.mode,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
