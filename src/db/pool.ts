import pg from 'pg';
import { DEFAULTS } from '../domain/defaults';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run one statement: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// bigint columns (job version) come back as JS numbers; versions never approach 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number.parseInt(text, 10));

export function createPool(
  connectionString: string,
  options: { max?: number; connectionTimeoutMs?: number } = {},
): Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? DEFAULTS.databasePool.max,
    application_name: 'onejob',
    // Waiting for a connection (from a busy pool, or to a server that does not answer) is bounded:
    // the request fails as "unavailable" instead of hanging.
    connectionTimeoutMillis:
      options.connectionTimeoutMs ?? DEFAULTS.databasePool.connectionTimeoutMs,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in one transaction: each database phase commits whole or not at all. */
export async function inTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // The pool listens for a lost connection only while a client is idle: checked out, a client
  // whose server goes away (a PostgreSQL crash or restart) would throw an unhandled 'error'
  // event and take the process down. Here it only breaks this transaction, and the client is
  // discarded instead of going back to the pool.
  let lost: Error | undefined;
  const onLost = (error: Error): void => void (lost ??= error);
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.removeListener('error', onLost);
    client.release(lost);
  }
}
