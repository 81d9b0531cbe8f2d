import { FAILURES, isRefusal, typedFailure, typedFailureOf } from '../domain/failures';

/**
 * PostgreSQL refusals that no retry can heal: a data exception (class 22) or an integrity
 * violation (class 23) that the caller did not handle itself. Everything else (a lost
 * connection, a serialization failure) may heal, so it is left to the activity's retries.
 */
function refusedByDatabase(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/**
 * The one translation at the activity boundary: a refusal of the catalogue (from the database
 * layer or the rules) becomes its typed, final failure, and a refusal by PostgreSQL itself a
 * `DatabaseRefused`. Anything else passes as it came, to the activity's retries.
 */
export function asTypedFailure(error: unknown): unknown {
  if (isRefusal(error)) return typedFailureOf(error);
  if (refusedByDatabase(error))
    return typedFailure(FAILURES.databaseRefused, `the database refused: ${error.message}`, {
      sqlState: error.code,
    });
  return error;
}

/** Wraps an activity so that what it throws crosses the boundary as asTypedFailure says. */
export function finalOnRefusal<Args extends unknown[], Result>(
  activity: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return async (...args: Args) => {
    try {
      return await activity(...args);
    } catch (error) {
      throw asTypedFailure(error);
    }
  };
}
