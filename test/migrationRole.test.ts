import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { withDatabase } from '../tools/stack/postgres';
import { uniqueName } from './support/database';
import { harness, ROOT } from './support/harness';
import { TEST_TOKEN } from './support/identities';
import { chatProvider } from './support/providers';
import { startServiceUntilExit } from './support/serviceProcesses';
import { useTestStack } from './support/stack';

/**
 * The schema can be changed by a step of its own, as the role that owns it, while the services
 * run as a role that may only read and write rows (ONEJOB_MIGRATIONS=verify): a service that
 * can be made to run SQL then cannot change the schema. The grants are those compose gives
 * (deploy/postgres/app-role.sql).
 */
const stack = useTestStack({ providers: (url) => [chatProvider(url, 'chat', 'sim-steady')] });
const run = promisify(execFile);
const admin = () => harness().adminDatabaseUrl;

/** A role of its own for this test run, that may log in (trust auth: no password). */
async function newRole(client: pg.Client, prefix: string): Promise<string> {
  const role = uniqueName(prefix);
  await client.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN NOSUPERUSER`);
  return role;
}

const asRole = (url: string, role: string): string => {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = '';
  return parsed.toString();
};

test('the services start as a role that cannot change the schema once a separate step has migrated it as the owner, and read and write as usual', async () => {
  const client = new pg.Client({ connectionString: admin() });
  await client.connect();
  const owner = await newRole(client, 'onejob_owner');
  const app = await newRole(client, 'onejob_app');
  const name = uniqueName('onejob_roles');
  await client.query(
    `CREATE DATABASE ${pg.escapeIdentifier(name)} OWNER ${pg.escapeIdentifier(owner)}`,
  );
  await client.end();
  const url = withDatabase(admin(), name);

  // The grants compose makes, with its variables bound.
  const grants = readFileSync(path.join(ROOT, 'deploy/postgres/app-role.sql'), 'utf8')
    .replaceAll(':"owner_role"', pg.escapeIdentifier(owner))
    .replaceAll(':"app_role"', pg.escapeIdentifier(app));
  const superuser = new pg.Client({ connectionString: url });
  await superuser.connect();
  await superuser.query(grants);
  await superuser.end();

  // The separate step, as the owner.
  const migrated = await run(process.execPath, [path.join(ROOT, 'dist/src/bin/migrate.js')], {
    env: { PATH: process.env.PATH, DATABASE_URL: asRole(url, owner) },
  });
  expect(migrated.stdout).toMatch(/applied 0001_jobs_attempts_races/);

  // The services' role may not change the schema...
  const appClient = new pg.Client({ connectionString: asRole(url, app) });
  await appClient.connect();
  await expect(appClient.query('CREATE TABLE intruder (x int)')).rejects.toThrow(
    /permission denied/,
  );
  await expect(appClient.query('ALTER TABLE jobs ADD COLUMN intruder int')).rejects.toThrow(
    /must be owner/,
  );
  await appClient.end();

  // ...and an API under it, checking the schema instead of migrating, starts and serves.
  const api = await stack.startExtraApi({
    DATABASE_URL: asRole(url, app),
    ONEJOB_MIGRATIONS: 'verify',
  });
  const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
  const registered = await fetch(`${api.url}/v1/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: 'https://hooks.example.com/in' }),
  });
  expect(registered.status).toBe(201);
  const listed = await fetch(`${api.url}/v1/jobs`, { headers });
  expect(listed.status).toBe(200);
  await api.stop();
});

test('a service that only checks the schema refuses to start, in one line, on a database not migrated', async () => {
  const client = new pg.Client({ connectionString: admin() });
  await client.connect();
  const name = uniqueName('onejob_bare');
  await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await client.end();
  const { code, output } = await startServiceUntilExit('api', {
    DATABASE_URL: withDatabase(admin(), name),
    ONEJOB_MIGRATIONS: 'verify',
    ONEJOB_API_TOKENS: 'alice:alice-token-0001',
    ONEJOB_PROVIDERS: JSON.stringify([chatProvider('http://127.0.0.1:1', 'chat', 'sim-steady')]),
  });
  expect(code).toBe(1);
  expect(output).toMatch(
    /migration 0001_jobs_attempts_races.sql is not applied \(ONEJOB_MIGRATIONS=verify\)/,
  );
  expect(output.trim().split('\n')).toHaveLength(1);
  // Nothing was created: checking changes nothing.
  const check = new pg.Client({ connectionString: withDatabase(admin(), name) });
  await check.connect();
  const { rows } = await check.query("SELECT to_regclass('onejob_migrations') AS t");
  await check.end();
  expect(rows[0]).toEqual({ t: null });
});
