import { z } from 'zod';
import { pathsWithNulCharacter } from '../domain/storableJson';

const NUL_REFUSED = 'must not contain U+0000 (NUL), which PostgreSQL cannot store or look up';

/** Text the API looks up or records in PostgreSQL (attempt ids, reasons, errors): no NUL. */
export function storableText(text: z.ZodString) {
  return text.refine((value) => !value.includes('\u0000'), NUL_REFUSED);
}

/**
 * Any JSON the API records as given (a provider's output, an operator's result): no NUL in a
 * key or a string. Bodies are at most MAX_JSON_DEPTH deep by then (see bodyShape.ts), so the
 * recursive walk is safe.
 */
export const storableJson = z
  .unknown()
  .refine((value) => pathsWithNulCharacter(value, '').length === 0, NUL_REFUSED);
