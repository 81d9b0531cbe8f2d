import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { createPool, type Pool } from '../../src/db/pool';
import { withDatabase } from '../../tools/stack/postgres';
import { harness } from './harness';

/** A name no other test file uses (databases, task queues). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/**
 * Where the run's PostgreSQL listens: the server global setup picked (the machine's own, or the
 * embedded one on a port of its own), for a proxy put in front of it. 5432 only when the URL
 * names no port, as libpq reads it.
 */
export function postgresAddress(): { host: string; port: number } {
  const url = new URL(harness().adminDatabaseUrl);
  return { host: url.hostname, port: Number(url.port || 5432) };
}

/** `databaseUrl`, reached through 127.0.0.1:`port` instead (a proxy in front of PostgreSQL). */
export function throughPort(databaseUrl: string, port: number): string {
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${port}`;
  return url.toString();
}

/** Any lock id of ours, for the template's creation only. */
const TEMPLATE_LOCK_ID = 7_031_031;
let template: Promise<string> | undefined;

/**
 * A database with this checkout's migrations applied, named after their content and kept on the
 * server: test databases are copied from it (about 60 ms) rather than migrated one by one
 * (about 400 ms each, and a suite makes about eighty). Made once, under a lock, by whichever test
 * process needs it first, and published by a rename, so a half-made template is never copied.
 */
function migratedTemplate(adminDatabaseUrl: string): Promise<string> {
  template ??= (async () => {
    const migrations = await loadMigrations();
    const digest = createHash('sha256');
    for (const migration of migrations) digest.update(`${migration.name}\0${migration.sql}\0`);
    const name = `onejob_template_${digest.digest('hex').slice(0, 16)}`;
    const admin = new pg.Client({ connectionString: adminDatabaseUrl });
    await admin.connect();
    try {
      await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_ID]);
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount === 0) {
        const making = `${name}_making`;
        await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(making)} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(making)}`);
        const pool = createPool(withDatabase(adminDatabaseUrl, making));
        try {
          await migrate(pool);
        } finally {
          await pool.end();
        }
        await admin.query(
          `ALTER DATABASE ${pg.escapeIdentifier(making)} RENAME TO ${pg.escapeIdentifier(name)}`,
        );
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return template;
}

/**
 * A fresh database with every migration applied (those of `migrationsDir` when given, migrated
 * here; otherwise a copy of the migrated template); dropped by the returned function.
 */
export async function createTestDatabase(migrationsDir?: string): Promise<{
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}> {
  const { adminDatabaseUrl } = harness();
  const name = uniqueName('onejob_test');
  const source = migrationsDir === undefined ? await migratedTemplate(adminDatabaseUrl) : undefined;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(
    `CREATE DATABASE ${pg.escapeIdentifier(name)}${source ? ` TEMPLATE ${pg.escapeIdentifier(source)}` : ''}`,
  );
  await admin.end();
  const url = withDatabase(adminDatabaseUrl, name);
  const pool = createPool(url);
  // A copy of the template is migrated already; this only checks it (and a migrationsDir applies).
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
