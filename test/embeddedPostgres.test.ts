import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/dev/postgres';
import { TEST_OUTPUT } from './harness';
import { processesMentioning, waitUntil } from './processScan';

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
