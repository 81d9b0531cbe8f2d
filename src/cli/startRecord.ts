import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * A record `npm start` keeps in its state folder for the operator CLI (the database it chose,
 * where its Jaeger answers): JSON, readable by its owner only (it may hold a connection string
 * or a URL with credentials), naming the npm start that wrote it. A record whose writer is gone
 * is stale; only its writer removes it, so a newer npm start on the same folder keeps its own.
 */
export interface StartRecord {
  pid: number;
}

export function writeStartRecord(file: string, record: StartRecord): void {
  rmSync(file, { force: true }); // a file left by someone else keeps its mode on rewrite
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // whatever the umask
}

/**
 * The record in `file`, undefined if there is none; `fields` picks what the record must hold
 * (undefined: not a record npm start wrote, which throws).
 */
export function readStartRecord<T extends StartRecord>(
  file: string,
  fields: (parsed: Record<string, unknown>) => T | undefined,
): T | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const record =
    typeof parsed === 'object' && parsed !== null && typeof (parsed as StartRecord).pid === 'number'
      ? fields(parsed as Record<string, unknown>)
      : undefined;
  if (!record) throw new Error(`${file} is not a record npm start wrote`);
  return record;
}

/** Removes the record in `file` if `pid` wrote it. */
export function removeStartRecord(file: string, pid: number): void {
  try {
    if (readStartRecord(file, (parsed) => parsed as unknown as StartRecord)?.pid !== pid) return;
  } catch {
    return;
  }
  rmSync(file, { force: true });
}

/** Whether the process that wrote a record still runs. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The record, if its writer still runs; else one line saying so and what does without it. */
export function liveStartRecord<T extends StartRecord>(
  file: string,
  record: T,
  variable: string,
): T {
  if (!isRunning(record.pid))
    throw new Error(
      `${file} is stale: the npm start that wrote it (pid ${record.pid}) is not running; start it again, or set ${variable}`,
    );
  return record;
}
