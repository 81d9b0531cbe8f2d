import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the Jaeger that `npm start` runs answers queries (its port may be chosen at start),
 * written to its state folder so that `onejob jobs trace` finds it without
 * ONEJOB_TRACE_QUERY_URL. Removed when that npm start stops; only its writer removes it.
 */
export interface TraceQueryRecord {
  /** Jaeger's query base URL: `/api/traces` is under it. */
  queryUrl: string;
  /** The npm start process that wrote it: a record whose writer is gone is stale. */
  pid: number;
}

export const traceQueryRecordFile = (stateDir: string): string =>
  path.join(stateDir, 'traces.json');

export function writeTraceQueryRecord(stateDir: string, record: TraceQueryRecord): void {
  const file = traceQueryRecordFile(stateDir);
  // Owner-only, as the database's record: a URL given by hand may carry credentials.
  rmSync(file, { force: true });
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export function readTraceQueryRecord(stateDir: string): TraceQueryRecord | undefined {
  let text: string;
  try {
    text = readFileSync(traceQueryRecordFile(stateDir), 'utf8');
  } catch {
    return undefined;
  }
  let parsed: Partial<TraceQueryRecord>;
  try {
    parsed = JSON.parse(text) as Partial<TraceQueryRecord>;
  } catch {
    parsed = {};
  }
  if (typeof parsed.queryUrl !== 'string' || typeof parsed.pid !== 'number')
    throw new Error(`${traceQueryRecordFile(stateDir)} is not a record npm start wrote`);
  return { queryUrl: parsed.queryUrl, pid: parsed.pid };
}

/** Removes the record if `pid` wrote it (a newer npm start on the same folder keeps its own). */
export function removeTraceQueryRecord(stateDir: string, pid: number): void {
  try {
    if (readTraceQueryRecord(stateDir)?.pid !== pid) return;
  } catch {
    return;
  }
  rmSync(traceQueryRecordFile(stateDir), { force: true });
}
