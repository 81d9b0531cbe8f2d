import type { JobIntent, JobMode, JobStatus, TerminalJobStatus } from '../domain/job';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

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
}

export interface JobRow {
  id: string;
  owner_id: string;
  idempotency_key: string;
  request_fingerprint: string;
  job_type: string;
  input: Record<string, unknown>;
  provider_plan: string[];
  mode: JobMode;
  workflow_id: string;
  version: number;
  completed_by: string | null;
  result: unknown;
  terminal_status: TerminalJobStatus | null;
  failure: unknown;
  status: JobStatus;
  attempt_count: number;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  admitted_at: Date | null;
  notes: unknown[];
  created_at_us: number;
}

/** The jobs table's own columns, named (see preparedStatement for why never `*`). */
const JOB_TABLE_COLUMNS: ReadonlyArray<keyof JobRow> = [
  'id',
  'owner_id',
  'idempotency_key',
  'request_fingerprint',
  'job_type',
  'input',
  'provider_plan',
  'mode',
  'workflow_id',
  'version',
  'completed_by',
  'result',
  'terminal_status',
  'failure',
  'created_at',
  'updated_at',
  'finished_at',
  'admitted_at',
  'notes',
];

function columnsOf(alias: string, columns: ReadonlyArray<keyof JobRow>): string {
  return columns.map((column) => `${alias}.${column}`).join(', ');
}

// The client-facing status is derived, so the job row (and its version) moves only when the
// outcome does; attempts carry the progress.
export const JOB_COLUMNS = `
  ${columnsOf('j', JOB_TABLE_COLUMNS)},
  COALESCE(j.terminal_status, CASE
    WHEN EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id AND a.state = 'unknown') THEN 'unknown'
    WHEN EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id) THEN 'running'
    ELSE 'pending'
  END) AS status,
  (SELECT count(*)::int FROM attempts a WHERE a.job_id = j.id) AS attempt_count,
  (extract(epoch FROM j.created_at) * 1000000)::bigint AS created_at_us`;

/** What JOB_COLUMNS yields, to select again from a subquery aliased `alias`. */
export function jobColumnsOf(alias: string): string {
  return columnsOf(alias, [...JOB_TABLE_COLUMNS, 'status', 'attempt_count', 'created_at_us']);
}

export function toJob(row: JobRow): JobRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    idempotencyKey: row.idempotency_key,
    requestFingerprint: row.request_fingerprint,
    type: row.job_type,
    input: row.input,
    providers: row.provider_plan,
    mode: row.mode,
    workflowId: row.workflow_id,
    version: row.version,
    completedBy: row.completed_by,
    result: row.result,
    terminalStatus: row.terminal_status,
    failure: row.failure,
    status: row.status,
    attemptCount: row.attempt_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    admittedAt: row.admitted_at,
    notes: row.notes,
    createdAtMicros: row.created_at_us,
  };
}

export interface NewJob {
  ownerId: string;
  idempotencyKey: string;
  requestFingerprint: string;
  intent: JobIntent;
  workflowId: string;
}

const INSERT_OR_FIND_JOB = preparedStatement(
  'jobs.insert-or-find',
  `WITH existing AS (
     SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.owner_id = $1 AND j.idempotency_key = $2
   ), inserted AS (
     INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input, provider_plan, mode, workflow_id)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE NOT EXISTS (SELECT 1 FROM existing)
     -- No conflict target: a racing insert of the same (owner, key) also collides on
     -- workflow_id (derived from them), and either collision means "already there".
     ON CONFLICT DO NOTHING
     RETURNING ${JOB_TABLE_COLUMNS.join(', ')}
   )
   SELECT ${columnsOf('i', JOB_TABLE_COLUMNS)}, 'pending' AS status, 0 AS attempt_count,
          (extract(epoch FROM i.created_at) * 1000000)::bigint AS created_at_us, true AS created
     FROM inserted i
   UNION ALL
   SELECT ${jobColumnsOf('e')}, false AS created FROM existing e`,
);

/**
 * Inserts the job, or finds the one that already holds (owner, key), in one round trip: a
 * replay reads the row it finds, a new key inserts. Under a race the unique constraint still
 * decides: when another request's insert committed after this statement's snapshot, the read
 * sees nothing and the insert does nothing, and a second statement reads the winner.
 */
export async function insertJobOrFindExisting(
  db: Queryable,
  job: NewJob,
): Promise<{ job: JobRecord; created: boolean }> {
  const { rows } = await db.query<JobRow & { created: boolean }>(
    INSERT_OR_FIND_JOB([
      job.ownerId,
      job.idempotencyKey,
      job.requestFingerprint,
      job.intent.type,
      JSON.stringify(job.intent.input),
      job.intent.providers,
      job.intent.mode,
      job.workflowId,
    ]),
  );
  const row = rows[0];
  if (row) return { job: toJob(row), created: row.created };
  // A separate statement: its snapshot sees the concurrent insert that made ours a no-op.
  const existing = await findJobByKey(db, job.ownerId, job.idempotencyKey);
  if (!existing) throw new Error('job insert conflicted but the existing job is not visible');
  return { job: existing, created: false };
}

const FIND_JOB_BY_KEY = preparedStatement(
  'jobs.find-by-key',
  `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.owner_id = $1 AND j.idempotency_key = $2`,
);

export async function findJobByKey(
  db: Queryable,
  ownerId: string,
  idempotencyKey: string,
): Promise<JobRecord | undefined> {
  const { rows } = await db.query<JobRow>(FIND_JOB_BY_KEY([ownerId, idempotencyKey]));
  return rows[0] && toJob(rows[0]);
}

const FIND_OWNED_JOB = preparedStatement(
  'jobs.find-owned',
  `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = $1 AND j.owner_id = $2`,
);

/** A job by id, visible only to its owner: another owner's job does not exist for them. */
export async function findOwnedJob(
  db: Queryable,
  ownerId: string,
  jobId: string,
): Promise<JobRecord | undefined> {
  const { rows } = await db.query<JobRow>(FIND_OWNED_JOB([jobId, ownerId]));
  return rows[0] && toJob(rows[0]);
}

const FIND_JOB = preparedStatement(
  'jobs.find',
  `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = $1`,
);

export async function findJob(db: Queryable, jobId: string): Promise<JobRecord | undefined> {
  const { rows } = await db.query<JobRow>(FIND_JOB([jobId]));
  return rows[0] && toJob(rows[0]);
}

const FINISH_JOB_WITHOUT_RESULT = preparedStatement(
  'jobs.finish-without-result',
  `UPDATE jobs SET terminal_status = $2, failure = $3, version = version + 1,
                   finished_at = now(), updated_at = now()
    WHERE id = $1 AND terminal_status IS NULL`,
);

/**
 * Ends a job without a result. Moves the version, so any attempt that read the old one
 * loses its compare-and-swap, and an attempt still `starting` can no longer send anything
 * (beginProviderCall checks the job under a lock). Idempotent: a job already terminal is left
 * as it is.
 */
export async function finishJobWithoutResult(
  db: Queryable,
  jobId: string,
  status: Exclude<TerminalJobStatus, 'succeeded'>,
  failure: Record<string, unknown>,
): Promise<JobRecord> {
  await db.query(FINISH_JOB_WITHOUT_RESULT([jobId, status, JSON.stringify(failure)]));
  const job = await findJob(db, jobId);
  if (!job) throw new Error(`job ${jobId} does not exist`);
  return job;
}

const MARK_JOB_ADMITTED = preparedStatement(
  'jobs.mark-admitted',
  'UPDATE jobs SET admitted_at = now() WHERE id = $1 AND admitted_at IS NULL',
);

/** Records that the job's workflow has run its first activity. Idempotent. */
export async function markJobAdmitted(db: Queryable, jobId: string): Promise<void> {
  await db.query(MARK_JOB_ADMITTED([jobId]));
}

const ADD_JOB_NOTE = preparedStatement(
  'jobs.add-note',
  `UPDATE jobs SET notes = notes || jsonb_build_array($2::jsonb)
    WHERE id = $1 AND NOT notes @> jsonb_build_array($2::jsonb)`,
);

/** Appends a note (why a step of the plan was skipped) once; repeating the same note is a no-op. */
export async function addJobNote(
  db: Queryable,
  jobId: string,
  note: Record<string, unknown>,
): Promise<void> {
  await db.query(ADD_JOB_NOTE([jobId, JSON.stringify(note)]));
}
