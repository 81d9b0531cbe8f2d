import { chmodSync, mkdtempSync } from 'node:fs';
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

test('embedded PostgreSQL starts from an empty folder, keeps its data across restarts, and stops whole', async () => {
  const parent = mkdtempSync(path.join(TEST_OUTPUT, 'embedded-pg-'));
  // mkdtemp makes a private folder; as root the server runs as `postgres`, which must enter it.
  chmodSync(parent, 0o755);
  const dataDir = path.join(parent, 'data');
  let server = await startEmbeddedPostgres(dataDir);
  await query(server.url, 'CREATE TABLE kept (value text); INSERT INTO kept VALUES ($$survives$$)');
  await server.process.stop();
  expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000)).toBe(true);

  server = await startEmbeddedPostgres(dataDir);
  try {
    expect(await query(server.url, 'SELECT value FROM kept')).toEqual([{ value: 'survives' }]);
  } finally {
    await server.process.stop();
  }
  expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 15_000)).toBe(true);
});
