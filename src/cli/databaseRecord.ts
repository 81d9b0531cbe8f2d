import path from 'node:path';
import { readStartRecord, removeStartRecord, writeStartRecord } from './startRecord';

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
  writeStartRecord(databaseRecordFile(stateDir), record);
}

export function readDatabaseRecord(stateDir: string): DatabaseRecord | undefined {
  return readStartRecord(databaseRecordFile(stateDir), (parsed) =>
    typeof parsed.url === 'string'
      ? {
          url: parsed.url,
          source: parsed.source === 'local' ? 'local' : 'embedded',
          pid: parsed.pid as number,
        }
      : undefined,
  );
}

export function removeDatabaseRecord(stateDir: string, pid: number): void {
  removeStartRecord(databaseRecordFile(stateDir), pid);
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
