import { databaseRecordFile, readDatabaseRecord, withoutPassword } from './databaseRecord';
import { liveStartRecord } from './startRecord';
import { stateFolder } from './stateFolder';

/**
 * Which database the CLI talks to: DATABASE_URL; else the one the running `npm start` recorded
 * in its state folder (embedded PostgreSQL's port changes every start); else the local server.
 */
export interface DatabaseChoice {
  url: string;
  /** Where the URL came from, for messages. */
  from: string;
  /** Said on stderr when the choice is not DATABASE_URL, so nobody wonders which server it was. */
  notice?: string;
}

const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/onejob';

export function chooseDatabase(env: NodeJS.ProcessEnv = process.env): DatabaseChoice {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, from: 'DATABASE_URL' };
  const stateDir = stateFolder(env);
  const file = databaseRecordFile(stateDir);
  const record = readDatabaseRecord(stateDir);
  if (!record) {
    return {
      url: LOCAL_DATABASE_URL,
      from: `the default ${withoutPassword(LOCAL_DATABASE_URL)}`,
      notice: `no DATABASE_URL and no npm start running on ${stateDir}; using ${withoutPassword(LOCAL_DATABASE_URL)}`,
    };
  }
  liveStartRecord(file, record, 'DATABASE_URL');
  const where = withoutPassword(record.url);
  return {
    url: record.url,
    from: `${file}`,
    notice: `database ${where} (${record.source}, from ${file})`,
  };
}

/** Connection failures say which database was tried and how it was chosen. */
export function explainConnectionFailure(error: unknown, choice: DatabaseChoice): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'ETIMEDOUT') return error;
  const where = withoutPassword(choice.url);
  return new Error(
    choice.from === 'DATABASE_URL'
      ? `nothing answers at ${where} (DATABASE_URL)`
      : `nothing answers at ${where} (${choice.from}): start npm start, or set DATABASE_URL`,
  );
}
