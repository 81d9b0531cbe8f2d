/** JSON bodies may nest this deep (the body itself is level 1); no job input needs more. */
export const MAX_JSON_DEPTH = 100;

/** A lone UTF-16 surrogate: JSON can spell one (`"\ud800"`), PostgreSQL's jsonb cannot store it. */
const LONE_SURROGATE = /\p{Cs}/u;
const loneSurrogate =
  'A string or key holds half of a UTF-16 surrogate pair (\\ud800-\\udfff alone), which is not text and cannot be stored.';

/**
 * Why a parsed JSON body cannot be taken, or undefined: nested deeper than MAX_JSON_DEPTH (the
 * service walks bodies recursively, and PostgreSQL has a nesting limit too), or a string or key
 * holding a lone surrogate. Walks iteratively, so a body of any depth is checked safely.
 */
export function bodyShapeProblem(body: unknown): string | undefined {
  const pending: Array<{ value: unknown; depth: number }> = [{ value: body, depth: 1 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, depth } = next;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return loneSurrogate;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_JSON_DEPTH)
      return `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels (objects and arrays).`;
    for (const [key, child] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) return loneSurrogate;
      pending.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}
