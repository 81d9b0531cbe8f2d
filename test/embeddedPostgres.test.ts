import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { resolveDatabase, startEmbeddedPostgres } from '../tools/stack/postgres';
import { harness, TEST_OUTPUT } from './support/harness';
import { processesMentioning, waitUntil } from './support/processScan';

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

test('embedded PostgreSQL starts from an empty folder, keeps its data across restarts, and stops whole, even from a folder only its owner may enter', async () => {
  // mkdtemp makes a private folder (0700), as root's home is: as root the server runs as the
  // postgres user, who cannot enter it, so its data lives where that user can reach it.
  const parent = mkdtempSync(path.join(TEST_OUTPUT, 'embedded-pg-'));
  const requested = path.join(parent, 'data');
  let server = await startEmbeddedPostgres(requested);
  const dataDir = server.dataDir;
  try {
    await query(
      server.url,
      'CREATE TABLE kept (value text); INSERT INTO kept VALUES ($$survives$$)',
    );
    await server.process.stop();
    expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000)).toBe(true);

    server = await startEmbeddedPostgres(requested);
    expect(server.dataDir).toBe(dataDir);
    try {
      expect(await query(server.url, 'SELECT value FROM kept')).toEqual([{ value: 'survives' }]);
    } finally {
      await server.process.stop();
    }
    expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000)).toBe(true);
  } finally {
    if (dataDir !== requested) rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }
});

test("when embedded PostgreSQL cannot start, the error is one line with PostgreSQL's own reason and what to do", async () => {
  const parent = mkdtempSync(path.join(TEST_OUTPUT, 'embedded-pg-refused-'));
  const requested = path.join(parent, 'data');
  const first = await startEmbeddedPostgres(requested);
  const dataDir = first.dataDir;
  await first.process.stop();
  try {
    // PostgreSQL refuses a data directory others may write to (a careless chmod, a copied tree).
    chmodSync(dataDir, 0o777);
    const failure = await startEmbeddedPostgres(requested).then(
      async (started) => {
        await started.process.stop();
        return undefined;
      },
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(/^embedded PostgreSQL did not start: /);
    expect(failure?.message).toContain(`data directory "${dataDir}" has invalid permissions`);
    expect(failure?.message).toContain(`chmod 700 ${dataDir}`);
    expect(failure?.message).not.toContain('\n');
    expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000)).toBe(true);
  } finally {
    rmSync(dataDir === requested ? parent : path.dirname(dataDir), {
      recursive: true,
      force: true,
    });
  }
});

test('a local server that answers but refuses us is not called "nothing"; embedded PostgreSQL starts instead', async () => {
  const saved = { url: process.env.DATABASE_URL, local: process.env.ONEJOB_LOCAL_POSTGRES_URL };
  delete process.env.DATABASE_URL;
  // The run's own server (the machine's, or the embedded one) answers, but knows no such role.
  // A password, for a server that asks for one: without it the client gives up before the server
  // has refused the role.
  const running = new URL(harness().adminDatabaseUrl).host;
  process.env.ONEJOB_LOCAL_POSTGRES_URL = `postgres://onejob_no_such_role:not-a-password@${running}/postgres`;
  const stateDir = mkdtempSync(path.join(TEST_OUTPUT, 'embedded-pg-refused-local-'));
  const lines: string[] = [];
  try {
    const database = await resolveDatabase({ stateDir, log: (line) => lines.push(line) });
    try {
      expect(database.source).toBe('embedded');
      expect(await query(database.adminUrl, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await database.stop();
    }
    const said = lines.join('\n');
    expect(said).toContain(`PostgreSQL: ${running} answered but refused us (`);
    expect(said).toContain('onejob_no_such_role');
    expect(said).not.toContain('nothing on');
  } finally {
    if (saved.url === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved.url;
    if (saved.local === undefined) delete process.env.ONEJOB_LOCAL_POSTGRES_URL;
    else process.env.ONEJOB_LOCAL_POSTGRES_URL = saved.local;
  }
});
