import path from 'node:path';
import { readStartRecord, removeStartRecord, writeStartRecord } from './startRecord';

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
  writeStartRecord(traceQueryRecordFile(stateDir), record);
}

export function readTraceQueryRecord(stateDir: string): TraceQueryRecord | undefined {
  return readStartRecord(traceQueryRecordFile(stateDir), (parsed) =>
    typeof parsed.queryUrl === 'string'
      ? { queryUrl: parsed.queryUrl, pid: parsed.pid as number }
      : undefined,
  );
}

export function removeTraceQueryRecord(stateDir: string, pid: number): void {
  removeStartRecord(traceQueryRecordFile(stateDir), pid);
}
