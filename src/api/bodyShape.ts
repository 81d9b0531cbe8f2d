import { jsonShapeProblem, MAX_JSON_BYTES } from '../domain/jsonShape';

export { MAX_JSON_DEPTH } from '../domain/jsonShape';

/**
 * Why a parsed JSON body cannot be taken, or undefined: the shape check every entry point shares
 * (see domain/jsonShape.ts), at most `maxBytes` (the API's body limit) large.
 */
export function bodyShapeProblem(body: unknown, maxBytes = MAX_JSON_BYTES): string | undefined {
  return jsonShapeProblem(body, maxBytes);
}
