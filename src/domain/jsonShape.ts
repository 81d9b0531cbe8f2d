/**
 * The shape every JSON value from outside must have before anything walks it recursively, hashes
 * it or stores it: one check, shared by the HTTP API and the Temporal-native entry (startJob,
 * the job workflow and its admission). Pure, so workflow code may call it.
 */

/** JSON may nest this deep (the value itself is level 1); no job input needs more. */
export const MAX_JSON_DEPTH = 100;

/** The largest JSON the API takes (its body limit) and the largest intent a native start may carry. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** A lone UTF-16 surrogate: JSON can spell one (`"\ud800"`), PostgreSQL's jsonb cannot store it. */
const LONE_SURROGATE = /\p{Cs}/u;
const loneSurrogate =
  'A string or key holds half of a UTF-16 surrogate pair (\\ud800-\\udfff alone), which is not text and cannot be stored.';

/** UTF-8 bytes of a string's characters (no escapes): a lower bound of its size in any JSON text. */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    bytes += unit < 0x80 ? 1 : unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 2 : 3;
  }
  return bytes;
}

/**
 * Why a JSON value cannot be taken, or undefined: nested deeper than MAX_JSON_DEPTH (the service
 * walks values recursively, and PostgreSQL has a nesting limit too), larger than `maxBytes` as
 * the smallest JSON text that spells it (so that nothing the HTTP body limit lets through is
 * refused here), or a string or key holding a lone surrogate. Walks iteratively, so a value of
 * any depth is checked without overflowing the stack.
 */
export function jsonShapeProblem(
  value: unknown,
  maxBytes: number = MAX_JSON_BYTES,
): string | undefined {
  const tooLarge = `The JSON is larger than ${maxBytes} bytes.`;
  let bytes = 0;
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: current, depth } = next;
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return loneSurrogate;
      bytes += utf8Bytes(current) + 2;
    } else if (current === null || typeof current !== 'object') {
      bytes += 1;
    } else {
      if (depth > MAX_JSON_DEPTH)
        return `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels (objects and arrays).`;
      const entries = Object.entries(current);
      // Brackets and separators; an object's keys with their quotes and colons.
      bytes += 2 + Math.max(entries.length - 1, 0);
      for (const [key, child] of entries) {
        if (!Array.isArray(current)) {
          if (LONE_SURROGATE.test(key)) return loneSurrogate;
          bytes += utf8Bytes(key) + 3;
        }
        pending.push({ value: child, depth: depth + 1 });
      }
    }
    if (bytes > maxBytes) return tooLarge;
  }
  return undefined;
}

/**
 * Why an intent started through Temporal (startJob, a workflow started by hand or as a child)
 * is refused before anything runs, worded as admission words an invalid intent; or undefined.
 */
export function intentShapeRefusal(intent: unknown): string | undefined {
  const problem = jsonShapeProblem(intent);
  return problem === undefined ? undefined : `invalid-input: ${problem}`;
}
