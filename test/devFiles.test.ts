import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  databaseRecordFile,
  withoutPassword,
  writeDatabaseRecord,
} from '../src/cli/databaseRecord';
import { ensureStateFolder } from '../src/cli/stateFolder';

/** npm start's state folder and database record hold secrets: only their owner may read them. */
let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'onejob-dev-files-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const modeOf = (file: string): number => statSync(file).mode & 0o777;

test('the state folder is 0700 whether npm start creates it or reuses a looser one', () => {
  const created = path.join(scratch, 'new', 'state');
  ensureStateFolder(created);
  expect(modeOf(created)).toBe(0o700);

  const reused = path.join(scratch, 'reused');
  mkdirSync(reused);
  chmodSync(reused, 0o755);
  ensureStateFolder(reused);
  expect(modeOf(reused)).toBe(0o700);
});

test('database.json is 0600 whether npm start creates it or finds a looser one', () => {
  const record = {
    url: 'postgres://u:secret@localhost:5432/db',
    source: 'embedded',
    pid: 1,
  } as const;
  writeDatabaseRecord(scratch, record);
  expect(modeOf(databaseRecordFile(scratch))).toBe(0o600);

  chmodSync(databaseRecordFile(scratch), 0o644);
  writeDatabaseRecord(scratch, record);
  expect(modeOf(databaseRecordFile(scratch))).toBe(0o600);

  const other = path.join(scratch, 'other');
  mkdirSync(other);
  writeFileSync(databaseRecordFile(other), '{}', { mode: 0o666 });
  chmodSync(databaseRecordFile(other), 0o666);
  writeDatabaseRecord(other, record);
  expect(modeOf(databaseRecordFile(other))).toBe(0o600);
});

test.each([
  ['in the user information', 'postgres://u:secret@h:5432/db', 'postgres://u@h:5432/db'],
  ['as a query parameter', 'postgres://u@h/db?password=secret', 'postgres://u@h/db'],
  [
    'as a query parameter beside others',
    'postgres://u@h/db?sslmode=require&password=secret&application_name=x',
    'postgres://u@h/db?sslmode=require&application_name=x',
  ],
  ['in both places', 'postgres://u:one@h/db?password=two', 'postgres://u@h/db'],
])('withoutPassword removes a password given %s', (_t, url, shown) => {
  expect(withoutPassword(url)).toBe(shown);
  expect(withoutPassword(url)).not.toMatch(/secret|one|two/);
});

test('a shared folder such as /tmp (sticky, open to all) is refused as the state folder, and its mode is left alone', () => {
  chmodSync(scratch, 0o1777);
  expect(() => ensureStateFolder(scratch)).toThrow(/shared folder/);
  expect(statSync(scratch).mode & 0o7777).toBe(0o1777);
});
