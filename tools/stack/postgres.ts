import path from 'node:path';
import pg from 'pg';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { builtTool } from './build';
import { reachableDataDir, reachableEmbeddedPostgres } from './postgresUserAccess';
import { spawnNodeScript, freePort, type GuardedProcess } from './processes';

export type DatabaseSource = 'DATABASE_URL' | 'local' | 'embedded';

export interface ResolvedDatabase {
  /** Connection string of a server where we may create databases (the `postgres` database). */
  adminUrl: string;
  source: DatabaseSource;
  stop(): Promise<void>;
}

export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The local server `npm start` looks for: ONEJOB_LOCAL_POSTGRES_URL, else 127.0.0.1:5432. */
export function localPostgresUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.ONEJOB_LOCAL_POSTGRES_URL || LOCAL_POSTGRES_URL;
}

/** What a look at a PostgreSQL server found: nothing there, a server we can use, or a refusal. */
export type PostgresProbe =
  { kind: 'nothing' } | { kind: 'usable' } | { kind: 'refused'; reason: string };

/** Errors that mean no server answered at all (as opposed to one that answered "no"). */
const NOTHING_THERE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']);

export async function probePostgres(url: string): Promise<PostgresProbe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { kind: 'usable' };
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code && NOTHING_THERE.has(code)) return { kind: 'nothing' };
    if (/timeout/i.test(message ?? '')) return { kind: 'nothing' };
    return { kind: 'refused', reason: message ?? String(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Returns a copy of `url` naming another database on the same server. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export async function ensureDatabase(adminUrl: string, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) {
      await client
        .query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`)
        .catch((error: { code?: string }) => {
          // Another process created it between our check and our create: fine.
          if (error.code !== '42P04') throw error;
        });
    }
  } finally {
    await client.end();
  }
  return withDatabase(adminUrl, database);
}

/** The compiled entry that runs embedded PostgreSQL in its own process (see embeddedPostgres.ts). */
const EMBEDDED_ENTRY = builtTool('stack', 'embeddedPostgres.js');

const PROJECT_MODULES = path.join(PACKAGE_ROOT, 'node_modules');

/**
 * Starts embedded PostgreSQL (data persisted for `dataDir`) in a child process of its own. As
 * root it runs as the `postgres` user; where that user cannot reach the checkout, the data
 * lives in `dataDir` (the folder it really used) under /var/lib instead (see postgresUserAccess).
 */
export async function startEmbeddedPostgres(
  requestedDataDir: string,
  log: (line: string) => void = () => undefined,
  /** The port to listen on (a restart keeps its clients' URL); default: a free one. */
  requestedPort?: number,
): Promise<{ url: string; process: GuardedProcess; dataDir: string; port: number }> {
  const port = requestedPort ?? (await freePort());
  const dataDir = reachableDataDir(requestedDataDir);
  if (dataDir !== requestedDataDir)
    log(`the postgres user cannot enter ${requestedDataDir}; its data lives in ${dataDir}`);
  const modules = await reachableEmbeddedPostgres(PROJECT_MODULES, log);
  const proc = spawnNodeScript(EMBEDDED_ENTRY, [dataDir, String(port), modules]);
  const url = await new Promise<string>((resolve, reject) => {
    proc.child.once('message', (message: { ready?: boolean; url?: string; error?: string }) => {
      if (message.ready && message.url) resolve(message.url);
      else
        reject(new Error(message.error ?? 'embedded PostgreSQL did not start (no reason given)'));
    });
    void proc.exited.then((code) =>
      reject(new Error(`embedded PostgreSQL exited (code ${code}) before it was ready`)),
    );
  });
  return { url, process: proc, dataDir, port };
}

/**
 * Picks the PostgreSQL server: DATABASE_URL if set; else the local server (127.0.0.1:5432, or
 * ONEJOB_LOCAL_POSTGRES_URL) if it lets us in; else embedded PostgreSQL with its data under
 * `stateDir`.
 */
export async function resolveDatabase(options: {
  stateDir: string;
  log: (line: string) => void;
}): Promise<ResolvedDatabase> {
  if (process.env.DATABASE_URL) {
    options.log('PostgreSQL: using DATABASE_URL');
    return {
      adminUrl: process.env.DATABASE_URL,
      source: 'DATABASE_URL',
      stop: async () => undefined,
    };
  }
  const localUrl = localPostgresUrl();
  const local = new URL(localUrl).host;
  const probe = await probePostgres(localUrl);
  if (probe.kind === 'usable') {
    options.log(`PostgreSQL: using the local server on ${local}`);
    return { adminUrl: localUrl, source: 'local', stop: async () => undefined };
  }
  const dataDir = path.join(options.stateDir, 'postgres');
  options.log(
    probe.kind === 'nothing'
      ? `PostgreSQL: no DATABASE_URL and nothing on ${local}; starting embedded PostgreSQL (data in ${dataDir})`
      : `PostgreSQL: ${local} answered but refused us (${probe.reason}); set DATABASE_URL to use it. Starting embedded PostgreSQL instead (data in ${dataDir})`,
  );
  const embedded = await startEmbeddedPostgres(dataDir, options.log);
  return { adminUrl: embedded.url, source: 'embedded', stop: () => embedded.process.stop() };
}
