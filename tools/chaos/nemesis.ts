import { randomUUID } from 'node:crypto';
import { startJob } from '../../src/temporal/startJob';
import type { Actors } from './operations';
import type { KeyRecord } from './world';

/**
 * The operator nemesis (issue 54): what an operator does to a job's run while one of its
 * provider calls is out, each of which makes Temporal execute that call's activity a second
 * time while the first execution still runs:
 *
 * - terminate the run, then the owner's backend calls `startJob` again for the same owner, key
 *   and intent (or nobody does, and the sweeper gives the job a new run): the new run adopts the
 *   attempts it finds, and schedules attempt 1's call again if it was still `starting`;
 * - reset the run to the workflow task that scheduled its latest `callProvider`: the reset run
 *   schedules that call again (the attempt's row was written by an activity before that task,
 *   so the reset run does not write it again).
 *
 * Every action is journaled (`nemesis` lines), with what Temporal answered.
 */

/** A provider call still out: an attempt `running` on an open job. */
export interface CallInFlight {
  attemptId: string;
  jobId: string;
  workflowId: string;
}

/** The attempt a scheduled `callProvider` is for (its one argument, `{ attemptId }`). */
function scheduledAttempt(event: {
  activityTaskScheduledEventAttributes?: {
    input?: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null;
  } | null;
}): string | undefined {
  const data = event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    const input = JSON.parse(Buffer.from(data).toString('utf8')) as { attemptId?: unknown };
    return typeof input.attemptId === 'string' ? input.attemptId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Terminates the job's current run, as an operator does from the Web UI or the CLI. True when
 * Temporal took it.
 */
export async function terminateRun(
  actors: Actors,
  op: number,
  workflowId: string,
  why: string,
): Promise<boolean> {
  try {
    await actors.temporal.workflow.getHandle(workflowId).terminate(why);
    actors.journal.write({ event: 'nemesis', op, action: 'terminate', workflowId, ok: true });
    return true;
  } catch (error) {
    actors.journal.write({
      event: 'nemesis',
      op,
      action: 'terminate',
      workflowId,
      error: (error as Error).message,
    });
    return false;
  }
}

/**
 * The owner's backend starts the key's job on Temporal (`startJob`, src/temporal/startJob.ts), with the key
 * and the intent of `record`: journaled as an exchange of operation `op`, of kind `kind` (the
 * Temporal race's start, or the nemesis's start again after a terminate).
 */
export async function startOnTemporal(
  actors: Actors,
  op: number,
  record: KeyRecord,
  kind = 'operator_nemesis',
): Promise<void> {
  const { journal, world } = actors;
  const started = Date.now();
  let outcome: { status: number; jobId?: string; error?: string };
  try {
    const job = await startJob(actors.temporal, {
      owner: record.owner,
      idempotencyKey: record.key,
      type: record.intent.type,
      input: record.intent.input,
      providers: record.intent.providers,
      mode: record.intent.mode,
      taskQueue: actors.taskQueue,
    });
    world.named(record, job.jobId, job.workflowId, false);
    outcome = { status: 200, jobId: job.jobId };
  } catch (error) {
    outcome = { status: 0, error: (error as Error).message };
  }
  journal.exchange({
    at: started - journal.started,
    ms: Date.now() - started,
    op,
    kind,
    method: 'startJob',
    path: 'temporal',
    via: 'temporal',
    owner: record.owner,
    key: record.key,
    ...outcome,
  });
}

/**
 * Resets the job's current run to the workflow task that scheduled its latest `callProvider`
 * (for `attemptId` when given), as an operator does to replay a run from a point: Temporal ends
 * the current run and starts one from there, which schedules that call again. Returns the
 * attempt whose call is scheduled again, or undefined when the run has no such call to reset to
 * (its history begins after it: a run the sweeper or a `startJob` made took the attempt over).
 */
export async function resetToLatestCall(
  actors: Actors,
  op: number,
  workflowId: string,
  attemptId?: string,
): Promise<string | undefined> {
  const { journal } = actors;
  try {
    const handle = actors.temporal.workflow.getHandle(workflowId);
    const { runId } = await handle.describe();
    const history = await handle.fetchHistory();
    const calls = (history.events ?? []).filter(
      (event) =>
        event.activityTaskScheduledEventAttributes?.activityType?.name === 'callProvider' &&
        (attemptId === undefined || scheduledAttempt(event) === attemptId),
    );
    const latest = calls.at(-1);
    const resetTo = latest?.activityTaskScheduledEventAttributes?.workflowTaskCompletedEventId;
    if (!latest || !resetTo) {
      journal.write({ event: 'nemesis', op, action: 'reset', workflowId, runId, found: false });
      return undefined;
    }
    const again = scheduledAttempt(latest);
    await actors.temporal.workflowService.resetWorkflowExecution({
      namespace: actors.temporal.options.namespace,
      workflowExecution: { workflowId, runId },
      reason: `an operator resets the run to just before it called for ${again ?? 'an attempt'}`,
      workflowTaskFinishEventId: resetTo,
      requestId: randomUUID(),
    });
    journal.write({
      event: 'nemesis',
      op,
      action: 'reset',
      workflowId,
      runId,
      attemptId: again,
      resetTo: resetTo.toString(),
      ok: true,
    });
    return again;
  } catch (error) {
    journal.write({
      event: 'nemesis',
      op,
      action: 'reset',
      workflowId,
      error: (error as Error).message,
    });
    return undefined;
  }
}
