/**
 * The schema snapshot: `docs/schema.sql`, what a database looks like with every migration
 * applied, so "what is the schema now" has one answer to read. `npm run schema:dump` writes it;
 * test/schemaSnapshot.test.ts fails when a migration changes the schema and the file was not
 * written again.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate } from '../../src/db/migrate';
import { createPool } from '../../src/db/pool';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { PG_DUMP, obtainDebianProgram } from './debianPackages';
import { localPostgresUrl, withDatabase } from './postgres';

export const SCHEMA_FILE = path.join(PACKAGE_ROOT, 'docs', 'schema.sql');

const HEADER = `-- onejob's schema with every migration applied: pg_dump --schema-only --no-owner
-- --no-privileges, without the lines that name the dump's versions or its session key.
-- Written by \`npm run schema:dump\`; test/schemaSnapshot.test.ts keeps it true.
`;

/** The snapshot's text for the database at `url`, dumped by `pgDump`. */
export async function dumpSchema(pgDump: string, url: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    pgDump,
    ['--schema-only', '--no-owner', '--no-privileges', `--dbname=${url}`],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const lines = stdout
    .split('\n')
    // \restrict carries a random key per dump; the versions change with the machine's client.
    .filter((line) => !line.startsWith('\\') && !/^-- Dumped (from|by) /.test(line));
  return `${HEADER}${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

/** `npm run schema:dump`: migrates a scratch database on the local server and writes the file. */
async function main(): Promise<void> {
  const pgDump = await obtainDebianProgram(PG_DUMP, (line) => console.log(line));
  const adminUrl = process.env.DATABASE_URL || localPostgresUrl();
  const name = `onejob_schema_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    const url = withDatabase(adminUrl, name);
    const pool = createPool(url);
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
    writeFileSync(SCHEMA_FILE, await dumpSchema(pgDump, url));
    console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  }
}

if (require.main === module)
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
