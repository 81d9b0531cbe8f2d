import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The database `npm start` chose when DATABASE_URL is unset (embedded PostgreSQL listens on a
 * new port each start), written to its state folder so that the operator CLI finds it. The file
 * holds a connection string, so only its owner may read it; it is removed when npm start stops.
 */
export interface DatabaseRecord {
  url: string;
  /** Where npm start found the server: the local server or embedded PostgreSQL. */
  source: 'local' | 'embedded';
  /** The npm start process that wrote it: a record whose writer is gone is stale. */
  pid: number;
}

export const databaseRecordFile = (stateDir: string): string =>
  path.join(stateDir, 'database.json');

export function writeDatabaseRecord(stateDir: string, record: DatabaseRecord): void {
  const file = databaseRecordFile(stateDir);
  rmSync(file, { force: true }); // a file left by someone else keeps its mode on rewrite
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // whatever the umask
}

export function readDatabaseRecord(stateDir: string): DatabaseRecord | undefined {
  let text: string;
  try {
    text = readFileSync(databaseRecordFile(stateDir), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = JSON.parse(text) as Partial<DatabaseRecord>;
  if (typeof parsed.url !== 'string' || typeof parsed.pid !== 'number')
    throw new Error(`${databaseRecordFile(stateDir)} is not a record npm start wrote`);
  return { url: parsed.url, source: parsed.source ?? 'embedded', pid: parsed.pid };
}

/** Removes the record if `pid` wrote it (a newer npm start on the same folder keeps its own). */
export function removeDatabaseRecord(stateDir: string, pid: number): void {
  try {
    if (readDatabaseRecord(stateDir)?.pid !== pid) return;
  } catch {
    return;
  }
  rmSync(databaseRecordFile(stateDir), { force: true });
}

/** Query parameters of a PostgreSQL connection string that hold a secret (libpq's names). */
const SECRET_PARAMETERS = ['password', 'sslpassword'];

/** A connection string fit to print: the password removed, from the user information or the query. */
export function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '';
  for (const name of SECRET_PARAMETERS)
    if (parsed.searchParams.has(name)) parsed.searchParams.delete(name);
  return parsed.toString();
}
