import { Refusal } from '../domain/failures';
import type { JobIntent } from '../domain/job';
import { jobWorkflowId } from '../domain/workflowId';
import {
  JOB_COLUMNS,
  JOB_DOC_OF_J,
  JOB_TABLE_COLUMNS,
  jobFromDoc,
  toJob,
  type JobDoc,
  type JobRecord,
  type JobRow,
} from './jobColumns';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

export type { JobRecord, KeyRelease } from './jobColumns';

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

// The key's live job is its unreleased one (at most one: jobs_live_key_idx, migration 0009). Both
// branches answer the job as one document (JOB_DOC_OF_J): the inserted row through the same
// expression, its attempts (none yet) read as for any job.
const INSERT_OR_FIND_JOB = preparedStatement(
  'jobs.insert-or-find',
  `WITH existing AS (
     SELECT ${JOB_DOC_OF_J} AS job FROM jobs j
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
   SELECT ${JOB_DOC_OF_J} AS job, true AS created FROM inserted j
   UNION ALL
   SELECT e.job, false AS created FROM existing e`,
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
  const { rows } = await db.query<{ job: JobDoc; created: boolean }>(
    INSERT_OR_FIND_JOB(newJobParameters(job, job.workflowId)),
  );
  const row = rows[0];
  if (row) return { job: jobFromDoc(row.job), created: row.created };
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

// A replay's read where owners have limits (service/ownerLimits.ts): one document, as above.
const FIND_JOB_BY_KEY = preparedStatement(
  'jobs.find-by-key',
  `SELECT ${JOB_DOC_OF_J} AS job FROM jobs j
    WHERE j.owner_id = $1 AND j.idempotency_key = $2 AND j.key_release IS NULL`,
);

export async function findJobByKey(
  db: Queryable,
  ownerId: string,
  idempotencyKey: string,
): Promise<JobRecord | undefined> {
  const { rows } = await db.query<{ job: JobDoc }>(FIND_JOB_BY_KEY([ownerId, idempotencyKey]));
  return rows[0] && jobFromDoc(rows[0].job);
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
