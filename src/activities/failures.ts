import { FAILURES, typedFailure } from '../domain/failures';

/**
 * PostgreSQL refusals that no retry can heal: a data exception (class 22) or an integrity
 * violation (class 23) that the caller did not handle itself. Everything else (a lost
 * connection, a serialization failure) may heal, so it is left to the activity's retries.
 */
function refusedByDatabase(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** Wraps a database activity so that a refusal by the database is a typed, final failure. */
export function finalOnRefusal<Args extends unknown[], Result>(
  activity: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return async (...args: Args) => {
    try {
      return await activity(...args);
    } catch (error) {
      if (refusedByDatabase(error))
        throw typedFailure(FAILURES.databaseRefused, `the database refused: ${error.message}`, {
          sqlState: error.code,
        });
      throw error;
    }
  };
}
