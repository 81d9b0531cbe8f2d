import { Refusal } from '../domain/failures';
import type { JobIntent, JobMode, JobStatus, TerminalJobStatus } from '../domain/job';
import { jobWorkflowId } from '../domain/workflowId';
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
  key_generation: number;
  key_release: KeyRelease | null;
  supersedes: string | null;
  superseded_by: string | null;
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
  'key_generation',
  'key_release',
  'supersedes',
  'superseded_by',
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
    keyGeneration: row.key_generation,
    keyRelease: row.key_release,
    supersedes: row.supersedes,
    supersededBy: row.superseded_by,
  };
}

export interface NewJob {
  ownerId: string;
  idempotencyKey: string;
  requestFingerprint: string;
  intent: JobIntent;
  workflowId: string;
  /** The key's generation that `workflowId` belongs to (default 1, the key's first job). */
  generation?: number;
  /**
   * The workflow id of the key's job of a later generation, needed when an operator released
   * the key; undefined for a generation the caller cannot run (its workflow id is another's).
   * Without it such a key cannot start a job here (see keyReleased).
   */
  workflowIdOfGeneration?: (generation: number) => string | undefined;
  /**
   * How long the inserting request holds the lease on starting the job's workflow (see
   * claimStartLease); undefined: no lease (the workflow is writing its own row).
   */
  startLeaseMs?: number;
}

/**
 * The caller's job is not the key's next one: an operator released the key and its next job is
 * another generation, which runs under that generation's workflow id (as startJob and HTTP derive
 * it). With no job under the key yet, the job's generation 1 is simply not valid here.
 */
function keyReleased(job: NewJob, previous: JobRecord | undefined): Refusal {
  if (!previous)
    return new Refusal(
      'invalidJob',
      'the key has no job yet: its first job is generation 1',
      undefined,
    );
  const nextGeneration = previous.keyGeneration + 1;
  const workflowId = jobWorkflowId(job.ownerId, job.idempotencyKey, nextGeneration);
  return new Refusal(
    'keyReleased',
    `the key was released by an operator: its next job is generation ${nextGeneration} of the key, workflow id ${workflowId}`,
    { releasedJobId: previous.id, nextGeneration, workflowId },
  );
}

/** $1–$8 of both job inserts: the job as given, under `workflowId`. */
function newJobParameters(job: NewJob, workflowId: string): unknown[] {
  return [
    job.ownerId,
    job.idempotencyKey,
    job.requestFingerprint,
    job.intent.type,
    JSON.stringify(job.intent.input),
    job.intent.providers,
    job.intent.mode,
    workflowId,
    job.startLeaseMs ?? null,
  ];
}

// The key's live job is its unreleased one (at most one: jobs_live_key_idx, migration 0009).
const INSERT_OR_FIND_JOB = preparedStatement(
  'jobs.insert-or-find',
  `WITH existing AS (
     SELECT ${JOB_COLUMNS} FROM jobs j
      WHERE j.owner_id = $1 AND j.idempotency_key = $2 AND j.key_release IS NULL
   ), inserted AS (
     INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input, provider_plan, mode, workflow_id,
                       start_lease_until)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, now() + $9::int * interval '1 millisecond'
      WHERE NOT EXISTS (SELECT 1 FROM existing)
     -- No conflict target: a racing insert of the same (owner, key) also collides on
     -- workflow_id (derived from them), and either collision means "already there". So does
     -- a released key's first generation: then the key's next job is inserted apart.
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
  // A later generation's run finds the live job, or makes the next generation: never a first.
  if ((job.generation ?? 1) > 1) {
    const live = await findJobByKey(db, job.ownerId, job.idempotencyKey);
    return live ? { job: live, created: false } : insertNextGeneration(db, job);
  }
  const { rows } = await db.query<JobRow & { created: boolean }>(
    INSERT_OR_FIND_JOB(newJobParameters(job, job.workflowId)),
  );
  const row = rows[0];
  if (row) return { job: toJob(row), created: row.created };
  // A separate statement: its snapshot sees the concurrent insert that made ours a no-op.
  const existing = await findJobByKey(db, job.ownerId, job.idempotencyKey);
  if (existing) return { job: existing, created: false };
  // No live job, and yet the first generation is taken: the key was released.
  return insertNextGeneration(db, job);
}

const LATEST_GENERATION = preparedStatement(
  'jobs.latest-generation',
  `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.owner_id = $1 AND j.idempotency_key = $2
    ORDER BY j.key_generation DESC LIMIT 1`,
);

// The successor of the key's latest job, only if that is still the generation the workflow id
// was derived for; and the latest job linked to it, in the same statement.
const INSERT_NEXT_GENERATION = preparedStatement(
  'jobs.insert-next-generation',
  `WITH previous AS (
     SELECT id, key_generation FROM jobs WHERE owner_id = $1 AND idempotency_key = $2
      ORDER BY key_generation DESC LIMIT 1
   ), inserted AS (
     INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, job_type, input,
                       provider_plan, mode, workflow_id, start_lease_until, key_generation, supersedes)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, now() + $9::int * interval '1 millisecond',
            p.key_generation + 1, p.id
       FROM previous p WHERE p.key_generation + 1 = $10
     ON CONFLICT DO NOTHING
     RETURNING id, supersedes
   ), linked AS (
     UPDATE jobs SET superseded_by = i.id, updated_at = now()
       FROM inserted i WHERE jobs.id = i.supersedes
     RETURNING jobs.id
   )
   SELECT i.id FROM inserted i, linked`,
);

/**
 * A new job under a released key: the key's next generation, with its own workflow id, linked
 * both ways to the job it supersedes. Two first creates racing after a release make one job:
 * the unique indexes decide, and the loser reads the winner.
 */
async function insertNextGeneration(
  db: Queryable,
  job: NewJob,
): Promise<{ job: JobRecord; created: boolean }> {
  const previous = await latestJobOfKey(db, job.ownerId, job.idempotencyKey);
  if (!previous) throw keyReleased(job, undefined);
  const generation = previous.keyGeneration + 1;
  const workflowId = job.workflowIdOfGeneration?.(generation);
  if (!workflowId) throw keyReleased(job, previous);
  const { rows } = await db.query<{ id: string }>(
    INSERT_NEXT_GENERATION([...newJobParameters(job, workflowId), generation]),
  );
  const inserted = rows[0] && (await findJob(db, rows[0].id));
  if (inserted) return { job: inserted, created: true };
  const existing = await findJobByKey(db, job.ownerId, job.idempotencyKey);
  if (existing) return { job: existing, created: false };
  throw new Error(`the key's generation ${generation} could not be created and none is live`);
}

/** The key's job of the highest generation, released or not; undefined if the key has none. */
export async function latestJobOfKey(
  db: Queryable,
  ownerId: string,
  idempotencyKey: string,
): Promise<JobRecord | undefined> {
  const { rows } = await db.query<JobRow>(LATEST_GENERATION([ownerId, idempotencyKey]));
  return rows[0] && toJob(rows[0]);
}

const FIND_JOB_BY_KEY = preparedStatement(
  'jobs.find-by-key',
  `SELECT ${JOB_COLUMNS} FROM jobs j
    WHERE j.owner_id = $1 AND j.idempotency_key = $2 AND j.key_release IS NULL`,
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

/**
 * A job's end, told only to the statement that made it end (the compare-and-swap that won, or
 * the finish without a result that found it open): what its duration histogram observes, once.
 */
export interface EndedJob {
  type: string;
  status: TerminalJobStatus;
  /** From its creation to its end, by the database's clock. */
  seconds: number;
}

/** What a statement that ends a job returns about it (see EndedJob). */
export const ENDED_JOB_COLUMNS = `job_type, terminal_status,
  extract(epoch FROM finished_at - created_at)::float8 AS ended_after_seconds`;

export interface EndedJobRow {
  job_type: string;
  terminal_status: TerminalJobStatus;
  ended_after_seconds: number;
}

export function toEndedJob(row: EndedJobRow): EndedJob {
  return { type: row.job_type, status: row.terminal_status, seconds: row.ended_after_seconds };
}

const FINISH_JOB_WITHOUT_RESULT = preparedStatement(
  'jobs.finish-without-result',
  `UPDATE jobs SET terminal_status = $2, failure = $3, version = version + 1,
                   finished_at = now(), updated_at = now()
    WHERE id = $1 AND terminal_status IS NULL
   RETURNING ${ENDED_JOB_COLUMNS}`,
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
): Promise<{ job: JobRecord; ended?: EndedJob }> {
  const { rows } = await db.query<EndedJobRow>(
    FINISH_JOB_WITHOUT_RESULT([jobId, status, JSON.stringify(failure)]),
  );
  const job = await findJob(db, jobId);
  if (!job) throw new Error(`job ${jobId} does not exist`);
  return rows[0] ? { job, ended: toEndedJob(rows[0]) } : { job };
}

const CLAIM_START_LEASE = preparedStatement(
  'jobs.claim-start-lease',
  `UPDATE jobs SET start_lease_until = now() + $2::int * interval '1 millisecond'
    WHERE id = $1 AND admitted_at IS NULL AND terminal_status IS NULL
      AND (start_lease_until IS NULL OR start_lease_until <= now())
    RETURNING id`,
);

/**
 * Takes the lease on starting a job's workflow when nobody holds it: its creator crashed
 * between the insert and the start, or gave the lease back. True for the one caller that took
 * it, who then starts the workflow; false while another holds it (its duplicate is answered
 * from the row) or once the workflow has admitted the job.
 */
export async function claimStartLease(
  db: Queryable,
  jobId: string,
  leaseMs: number,
): Promise<boolean> {
  return (await db.query(CLAIM_START_LEASE([jobId, leaseMs]))).rowCount === 1;
}

const GIVE_BACK_START_LEASE = preparedStatement(
  'jobs.give-back-start-lease',
  'UPDATE jobs SET start_lease_until = NULL WHERE id = $1 AND admitted_at IS NULL',
);

/** The start failed: the next duplicate (or the sweeper) tries it at once instead of later. */
export async function giveBackStartLease(db: Queryable, jobId: string): Promise<void> {
  await db.query(GIVE_BACK_START_LEASE([jobId]));
}

const MARK_JOB_ADMITTED = preparedStatement(
  'jobs.mark-admitted',
  'UPDATE jobs SET admitted_at = now() WHERE id = $1 AND admitted_at IS NULL',
);

/** Records that the job's workflow has run its first activity. Idempotent. */
export async function markJobAdmitted(db: Queryable, jobId: string): Promise<void> {
  await db.query(MARK_JOB_ADMITTED([jobId]));
}

const ADD_JOB_NOTES = preparedStatement(
  'jobs.add-notes',
  `WITH fresh AS (
     SELECT coalesce(jsonb_agg(note ORDER BY position), '[]'::jsonb) AS notes
       FROM jobs, jsonb_array_elements($2::jsonb) WITH ORDINALITY AS given(note, position)
      WHERE jobs.id = $1 AND NOT jobs.notes @> jsonb_build_array(note))
   UPDATE jobs SET notes = jobs.notes || fresh.notes
     FROM fresh WHERE jobs.id = $1 AND fresh.notes <> '[]'::jsonb`,
);

/**
 * Appends notes (why steps of the plan were skipped), each once: a note the job already has is
 * not added again. One statement however many there are.
 */
export async function addJobNotes(
  db: Queryable,
  jobId: string,
  notes: Array<Record<string, unknown>>,
): Promise<void> {
  if (notes.length > 0) await db.query(ADD_JOB_NOTES([jobId, JSON.stringify(notes)]));
}

/** Appends one note once (see addJobNotes). */
export function addJobNote(
  db: Queryable,
  jobId: string,
  note: Record<string, unknown>,
): Promise<void> {
  return addJobNotes(db, jobId, [note]);
}

const ADD_COUNTED_NOTE = preparedStatement(
  'jobs.add-counted-note',
  `WITH noted AS (
     UPDATE jobs SET notes = notes || jsonb_build_array($2::jsonb)
      WHERE id = $1 AND NOT notes @> jsonb_build_array($2::jsonb)
      RETURNING id)
   INSERT INTO metric_deltas SELECT $3, $4, 1 FROM noted`,
);

/**
 * Appends a note once, as addJobNote, and counts it in the metric totals (`metric`, `label`) in
 * the same statement: a note written again (an activity's retry) is neither added nor counted.
 */
export async function addCountedJobNote(
  db: Queryable,
  jobId: string,
  note: Record<string, unknown>,
  metric: string,
  label: string,
): Promise<void> {
  await db.query(ADD_COUNTED_NOTE([jobId, JSON.stringify(note), metric, label]));
}

const ADD_NOTE_IF_OPEN = preparedStatement(
  'jobs.add-note-if-open',
  `UPDATE jobs SET notes = notes || jsonb_build_array($2::jsonb)
    WHERE id = $1 AND terminal_status IS NULL
    RETURNING id`,
);

/**
 * Appends a note to a job that is still open, and says whether it was: the row as it is now
 * decides (the statement waits for any writer of the row), not as a listing read it before.
 */
export async function addNoteIfOpen(
  db: Queryable,
  jobId: string,
  note: Record<string, unknown>,
): Promise<boolean> {
  const { rowCount } = await db.query(ADD_NOTE_IF_OPEN([jobId, JSON.stringify(note)]));
  return rowCount === 1;
}

const COUNT_SWEEP_FAILURE = preparedStatement(
  'jobs.count-sweep-failure',
  `INSERT INTO metric_deltas VALUES ('sweep_failures', $1, 1)`,
);

/** Counts one job the sweeper could not handle, for onejob_sweep_failures_total{pass}. */
export async function countSweepFailure(db: Queryable, pass: string): Promise<void> {
  await db.query(COUNT_SWEEP_FAILURE([pass]));
}

const RELEASE_KEY = preparedStatement(
  'jobs.release-key',
  `UPDATE jobs
      SET key_release = jsonb_build_object('operator', $2::text, 'reason', $3::text,
                                           'at', to_char(now() AT TIME ZONE 'UTC',
                                                         'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
          updated_at = now()
    WHERE id = $1 AND terminal_status IS NOT NULL AND key_release IS NULL
      -- planted-bug site (tools/chaos/plantedBugs.ts): release-while-unknown
      AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = jobs.id AND attempt_may_take_effect(a))
    RETURNING id`,
);

const ATTEMPT_THAT_MAY_TAKE_EFFECT = preparedStatement(
  'jobs.attempt-that-may-take-effect',
  `SELECT a.id, a.seq, a.provider, a.state, a.call_ended_at IS NULL AND a.started_at IS NOT NULL AS call_open
     FROM attempts a WHERE a.job_id = $1 AND attempt_may_take_effect(a) ORDER BY a.seq LIMIT 1`,
);

/**
 * The first attempt of a job that may still take effect (starting, running or unknown, or a
 * call whose late-result window is still open), as migration 0010 defines it; undefined if none.
 */
export async function attemptThatMayTakeEffect(
  db: Queryable,
  jobId: string,
): Promise<
  { attemptId: string; seq: number; provider: string; state: string; callOpen: boolean } | undefined
> {
  const { rows } = await db.query<{
    id: string;
    seq: number;
    provider: string;
    state: string;
    call_open: boolean;
  }>(ATTEMPT_THAT_MAY_TAKE_EFFECT([jobId]));
  const row = rows[0];
  return (
    row && {
      attemptId: row.id,
      seq: row.seq,
      provider: row.provider,
      state: row.state,
      callOpen: row.call_open,
    }
  );
}

/**
 * Releases an ended job's key, once: the next create with the same (owner, key) makes a new
 * job. Undefined when nothing was released (no such job, not ended, released already, or an
 * attempt may still take effect: a trigger refuses that last one too).
 */
export async function releaseJobKey(
  db: Queryable,
  jobId: string,
  release: { operator: string; reason: string },
): Promise<JobRecord | undefined> {
  const { rows } = await db.query<{ id: string }>(
    RELEASE_KEY([jobId, release.operator, release.reason]),
  );
  return rows[0] ? findJob(db, jobId) : undefined;
}
