import type { Queryable } from './pool';
import { preparedStatement } from './statements';

// Whether the owner has an endpoint, in the same round trip: a job of an owner without one has
// no ending's events to hand over, and its run need not ask (JobPlan.ownerHasWebhooks).
const MARK_JOB_ADMITTED = preparedStatement(
  'jobs.mark-admitted',
  `WITH admitted AS (
     UPDATE jobs SET admitted_at = now() WHERE id = $1 AND admitted_at IS NULL
   )
   SELECT EXISTS (
     SELECT 1 FROM jobs j JOIN webhook_endpoints e ON e.owner_id = j.owner_id
      WHERE j.id = $1 AND e.deleted_at IS NULL
   ) AS owner_has_webhooks`,
);

/**
 * Records that the job's workflow has run its first activity (idempotent), and says whether the
 * job's owner has a webhook endpoint (enabled or not) now.
 */
export async function markJobAdmitted(
  db: Queryable,
  jobId: string,
): Promise<{ ownerHasWebhooks: boolean }> {
  const { rows } = await db.query<{ owner_has_webhooks: boolean }>(MARK_JOB_ADMITTED([jobId]));
  return { ownerHasWebhooks: rows[0]?.owner_has_webhooks ?? true };
}
