import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/db/migrate';
import { createPool, type Pool } from '../../src/db/pool';
import { withDatabase } from '../../src/dev/postgres';
import { harness } from '../harness';

/** A name no other test file uses (databases, task queues). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/**
 * A fresh database with every migration applied (those of `migrationsDir` when given); dropped
 * by the returned function.
 */
export async function createTestDatabase(migrationsDir?: string): Promise<{
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}> {
  const { adminDatabaseUrl } = harness();
  const name = uniqueName('onejob_test');
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  const url = withDatabase(adminDatabaseUrl, name);
  const pool = createPool(url);
  await migrate(pool, migrationsDir);
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: adminDatabaseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * Runs statements the database is expected to refuse inside a transaction that is always rolled
 * back, so a surprise success cannot leave a stray row behind for the rest of the file.
 */
export async function inRolledBackTransaction<T>(
  pool: Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    return await work(client);
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}
