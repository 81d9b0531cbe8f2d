/**
 * An error and the errors it wraps (`cause`), outermost first, a few levels deep at most: the
 * one walk every layer uses to ask what an error was caused by.
 */
export function* causeChain(error: unknown, depth = 5): Generator<unknown> {
  for (let current = error, level = 0; current && level < depth; level++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}
