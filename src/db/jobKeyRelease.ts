import { findJob, type JobRecord } from './jobs';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

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
