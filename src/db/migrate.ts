import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../domain/packageRoot';
import type { Pool } from './pool';

/** Migrations live next to the package root: `migrations/<number>_<name>.sql`, applied in order. */
export const MIGRATIONS_DIR = path.join(PACKAGE_ROOT, 'migrations');

// Any fixed 64-bit number; every process that migrates takes the same lock.
const MIGRATION_LOCK_ID = 0x6f6e656a6f62; // "onejob"

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = /^(\d+)_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new Error(`migration file name must look like 0001_name.sql: ${file}`);
    const id = Number(match[1]);
    if (migrations.some((m) => m.id === id)) throw new Error(`two migrations numbered ${id}`);
    migrations.push({ id, name: file, sql: await readFile(path.join(dir, file), 'utf8') });
  }
  return migrations;
}

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock so
 * that two processes starting together cannot both apply the same file.
 * Returns the names applied by this call.
 */
export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await loadMigrations(dir);
  const client = await pool.connect();
  const applied: string[] = [];
  // A server that goes away mid-migration fails the migration (the next statement says so), not
  // the process: a checked-out client's 'error' event has no other listener.
  const onLost = (): void => undefined;
  client.on('error', onLost);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS onejob_migrations (
      id integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = await client.query<{ id: number; name: string }>(
      'SELECT id, name FROM onejob_migrations',
    );
    const doneById = new Map(done.rows.map((row) => [row.id, row.name]));
    for (const migration of migrations) {
      const previous = doneById.get(migration.id);
      if (previous !== undefined) {
        if (previous !== migration.name) {
          throw new Error(
            `migration ${migration.id} was applied as ${previous}, now named ${migration.name}`,
          );
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO onejob_migrations (id, name) VALUES ($1, $2)', [
          migration.id,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      applied.push(migration.name);
    }
    return applied;
  } finally {
    // The session lock goes with the connection: destroy it rather than return it to the pool.
    client.removeListener('error', onLost);
    client.release(true);
  }
}

/**
 * Checks, without changing anything, that every migration of this release is applied (by
 * another step, under a role that owns the schema: ONEJOB_MIGRATIONS=verify). Throws one line
 * naming the first one missing. Migrations applied beyond this release's (a newer release
 * migrated first) are allowed: each migration keeps the schema usable by the release before it.
 */
export async function verifyMigrated(pool: Pool, dir = MIGRATIONS_DIR): Promise<void> {
  const migrations = await loadMigrations(dir);
  const table = await pool.query<{ present: boolean }>(
    "SELECT to_regclass('onejob_migrations') IS NOT NULL AS present",
  );
  const done = table.rows[0]?.present
    ? await pool.query<{ id: number; name: string }>('SELECT id, name FROM onejob_migrations')
    : { rows: [] };
  const doneById = new Map(done.rows.map((row) => [row.id, row.name]));
  for (const migration of migrations) {
    const applied = doneById.get(migration.id);
    if (applied === undefined)
      throw new Error(
        `migration ${migration.name} is not applied (ONEJOB_MIGRATIONS=verify): run node dist/src/bin/migrate.js as the schema's owner first`,
      );
    if (applied !== migration.name)
      throw new Error(
        `migration ${migration.id} was applied as ${applied}, now named ${migration.name}`,
      );
  }
}

/** Whether a service applies the migrations at start, or only checks that they were applied. */
export type MigrationMode = 'apply' | 'verify';

/** The schema at a service's start: migrated by it, or checked (see MigrationMode). */
export async function schemaAtStart(pool: Pool, mode: MigrationMode): Promise<void> {
  if (mode === 'verify') await verifyMigrated(pool);
  else await migrate(pool);
}
