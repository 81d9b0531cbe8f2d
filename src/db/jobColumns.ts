import type { JobMode, JobStatus, TerminalJobStatus } from '../domain/job';

export interface JobRecord {
  id: string;
  ownerId: string;
  idempotencyKey: string;
  requestFingerprint: string;
  type: string;
  input: Record<string, unknown>;
  providers: string[];
  mode: JobMode;
  workflowId: string;
  version: number;
  completedBy: string | null;
  result: unknown;
  terminalStatus: TerminalJobStatus | null;
  failure: unknown;
  /** What clients see: the terminal status, or derived from the attempts while the job runs. */
  status: JobStatus;
  attemptCount: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  admittedAt: Date | null;
  notes: unknown[];
  /** Exact creation time in microseconds since the epoch: the pagination cursor's key. */
  createdAtMicros: number;
  /** 1 for a key's first job; the next job after each release of the key counts up. */
  keyGeneration: number;
  /** Set when an operator released the key: who, why and when. */
  keyRelease: KeyRelease | null;
  /** The job of the key's previous generation, which this one replaced. */
  supersedes: string | null;
  /** The job of the key's next generation, created after the key was released. */
  supersededBy: string | null;
}

/** An operator's release of a job's key, as recorded on the job. */
export interface KeyRelease {
  operator: string;
  reason: string;
  at: string;
}

/**
 * Each field of a JobRecord and the column it is read as, written once: the row type, the
 * SELECT lists and toJob are derived from it. In JobRecord's order, which is also the order the
 * statements select the table's columns in (their text is what PostgreSQL prepares).
 */
const JOB_FIELD_COLUMNS = {
  id: 'id',
  ownerId: 'owner_id',
  idempotencyKey: 'idempotency_key',
  requestFingerprint: 'request_fingerprint',
  type: 'job_type',
  input: 'input',
  providers: 'provider_plan',
  mode: 'mode',
  workflowId: 'workflow_id',
  version: 'version',
  completedBy: 'completed_by',
  result: 'result',
  terminalStatus: 'terminal_status',
  failure: 'failure',
  status: 'status',
  attemptCount: 'attempt_count',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  finishedAt: 'finished_at',
  admittedAt: 'admitted_at',
  notes: 'notes',
  createdAtMicros: 'created_at_us',
  keyGeneration: 'key_generation',
  keyRelease: 'key_release',
  supersedes: 'supersedes',
  supersededBy: 'superseded_by',
} as const satisfies Record<keyof JobRecord, string>;

type JobField = keyof typeof JOB_FIELD_COLUMNS;
type JobColumn = (typeof JOB_FIELD_COLUMNS)[JobField];

/** A job as the statements select it: each column, typed as its JobRecord field. */
export type JobRow = { [F in JobField as (typeof JOB_FIELD_COLUMNS)[F]]: JobRecord[F] };

const JOB_FIELDS = Object.entries(JOB_FIELD_COLUMNS) as Array<[JobField, JobColumn]>;

// The client-facing status is derived, so the job row (and its version) moves only when the
// outcome does; attempts carry the progress. Of the job aliased `j`.
export const JOB_STATUS_OF_J = `COALESCE(j.terminal_status, CASE
    WHEN EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id AND a.state = 'unknown') THEN 'unknown'
    WHEN EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id) THEN 'running'
    ELSE 'pending'
  END)`;

/** The columns the statements work out rather than read from the table, of the job aliased `j`. */
const WORKED_OUT_OF_J: Partial<Record<JobColumn, string>> = {
  status: JOB_STATUS_OF_J,
  attempt_count: '(SELECT count(*)::int FROM attempts a WHERE a.job_id = j.id)',
  created_at_us: '(extract(epoch FROM j.created_at) * 1000000)::bigint',
};
const WORKED_OUT = Object.keys(WORKED_OUT_OF_J) as JobColumn[];

/** The jobs table's own columns, named (see preparedStatement for why never `*`). */
export const JOB_TABLE_COLUMNS: readonly JobColumn[] = JOB_FIELDS.map(
  ([, column]) => column,
).filter((column) => !WORKED_OUT.includes(column));

/** Every column of a job row, the worked-out ones last (as JOB_COLUMNS selects them). */
const ROW_COLUMNS: readonly JobColumn[] = [...JOB_TABLE_COLUMNS, ...WORKED_OUT];

const valueOfJ = (column: JobColumn): string => WORKED_OUT_OF_J[column] ?? `j.${column}`;

/** The job aliased `j`, as columns (read back with toJob). */
export const JOB_COLUMNS = ROW_COLUMNS.map((column) =>
  WORKED_OUT.includes(column) ? `${valueOfJ(column)} AS ${column}` : valueOfJ(column),
).join(', ');

/**
 * The job aliased `j` as one JSON object of JobRecord's fields (read back with jobFromDoc). A
 * row of one column costs the client far less to take in than one of 26, each described and
 * parsed on its own: the replay path's statements read jobs so (the client's CPU per replay,
 * measured on this machine: the insert-or-find 70 µs as columns, 50 as a document; the read by
 * key 58 and 35; docs/benchmark.md).
 */
export const JOB_DOC_OF_J = `json_build_object(${JOB_FIELDS.map(
  ([field, column]) => `'${field}', ${valueOfJ(column)}`,
).join(', ')})`;

/** A job as JOB_DOC_OF_J encodes it: what JSON cannot hold (times) as strings. */
export type JobDoc = Omit<JobRecord, 'createdAt' | 'updatedAt' | 'finishedAt' | 'admittedAt'> & {
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  admittedAt: string | null;
};

export function jobFromDoc(doc: JobDoc): JobRecord {
  const at = (text: string | null) => (text === null ? null : new Date(text));
  return {
    ...doc,
    createdAt: new Date(doc.createdAt),
    updatedAt: new Date(doc.updatedAt),
    finishedAt: at(doc.finishedAt),
    admittedAt: at(doc.admittedAt),
  };
}

/** What JOB_COLUMNS yields, to select again from a subquery aliased `alias`. */
export function jobColumnsOf(alias: string): string {
  return ROW_COLUMNS.map((column) => `${alias}.${column}`).join(', ');
}

export function toJob(row: JobRow): JobRecord {
  const job: Partial<Record<JobField, unknown>> = {};
  for (const [field, column] of JOB_FIELDS) job[field] = row[column];
  // Each field was read from its own column, whose type JobRow gives as the field's.
  return job as JobRecord;
}
