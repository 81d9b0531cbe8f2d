import type { Fault } from './faults';

/**
 * The simulated models, served by both chat APIs: their behaviour profiles by name, and what
 * they answer. Injected faults come before a model's profile.
 */
export const MODEL_PROFILES: Record<string, Fault | undefined> = {
  'sim-steady': undefined,
  'sim-backup': undefined,
  'sim-hallucinates': { kind: 'extra_key' },
  'sim-prose': { kind: 'malformed_output' },
  'sim-wrongtypes': { kind: 'wrong_types' },
  'sim-slow': { kind: 'delay', ms: 2_000 },
  'sim-hangs': { kind: 'hang' },
  'sim-500-after': { kind: 'fail_after', status: 500 },
  'sim-drops': { kind: 'drop_after' },
};
export const SIMULATOR_MODELS = Object.keys(MODEL_PROFILES);

function summariseText(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  const firstSentence = /^.*?[.!?।](\s|$)/u.exec(clean)?.[0]?.trim() ?? clean;
  const limit = Math.max(1, Math.min(200, clean.length - 1));
  return firstSentence.length <= limit ? firstSentence : `${clean.slice(0, limit - 1).trimEnd()}…`;
}

/** The last sentence, as a differently-minded model might choose. */
function summariseTail(text: string): string {
  const sentences = text
    .replace(/\s+/g, ' ')
    .trim()
    .match(/[^.!?।]+[.!?।]?/gu) ?? [text];
  const last = sentences[sentences.length - 1]!.trim();
  return last.length < text.trim().length ? last : summariseText(text);
}

/** What a model says, as the chat APIs carry it: JSON text, prose, or a structured object. */
export function answer(
  model: string,
  text: string,
  fault: Fault | undefined,
): { json: unknown; prose?: string } {
  // The backup model summarises differently, so tests can tell whose answer won.
  const summary = model === 'sim-backup' ? summariseTail(text) : summariseText(text);
  if (fault?.kind === 'malformed_output')
    return { json: null, prose: `Sure! Here is your summary: ${summary}` };
  if (fault?.kind === 'extra_key') return { json: { summary, confidence: 0.97 } };
  if (fault?.kind === 'wrong_types') return { json: { summary: summary.length } };
  return { json: { summary } };
}
