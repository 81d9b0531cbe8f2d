import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';

const { EventType } = temporal.api.enums.v1;

/** What one job cost Temporal: its history, and the tasks and activities in it. */
export interface TemporalProfile {
  historyEvents: number;
  workflowTasks: number;
  activities: number;
  localActivities: number;
  timers: number;
}

/** The mean over some workflows of what their histories hold (the latest run of each). */
export async function profileWorkflows(
  client: Client,
  workflowIds: string[],
): Promise<TemporalProfile> {
  const total: TemporalProfile = {
    historyEvents: 0,
    workflowTasks: 0,
    activities: 0,
    localActivities: 0,
    timers: 0,
  };
  for (const id of workflowIds) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    for (const event of history.events ?? []) {
      total.historyEvents += 1;
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        total.workflowTasks += 1;
      if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) total.activities += 1;
      if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) total.localActivities += 1;
      if (event.eventType === EventType.EVENT_TYPE_TIMER_STARTED) total.timers += 1;
    }
  }
  const n = Math.max(1, workflowIds.length);
  return Object.fromEntries(
    Object.entries(total).map(([name, value]) => [name, Math.round((value / n) * 10) / 10]),
  ) as unknown as TemporalProfile;
}

/** Transactions committed or rolled back in this database so far (every client's). */
export async function transactionCount(pool: Pool): Promise<number> {
  // Backends publish their counts about once a second; wait that out so a turn's are all in.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const { rows } = await pool.query<{ n: string }>(
    `SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = current_database()`,
  );
  return Number(rows[0]!.n);
}
