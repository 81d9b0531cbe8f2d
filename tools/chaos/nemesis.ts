import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { isPauseUnavailable, requestWorkflowPause } from '../../src/service/workflowPause';
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
 *   so the reset run does not write it again);
 * - where the server pauses workflows (1.30+: the production engine), pause the run, cancel the
 *   job as an operator while it is paused (refused 409 `workflow-paused`, nothing done), and
 *   unpause it: the call's answer that came meanwhile waits for the run, which goes on.
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

/**
 * Whether this Temporal server pauses workflows: asked of a workflow that does not exist, a
 * server with pause answers NOT_FOUND, one without (or with it off) UNIMPLEMENTED.
 */
export async function serverPausesWorkflows(temporal: Client): Promise<boolean> {
  try {
    await requestWorkflowPause(temporal, 'pause', {
      workflowId: `chaos-pause-probe-${randomUUID()}`,
      identity: 'chaos-operator',
      reason: 'does this server pause workflows?',
    });
    return true;
  } catch (error) {
    return !isPauseUnavailable(error);
  }
}

/**
 * Pauses or unpauses the run, as an operator does; true when it is so now. Asked again with the
 * same request id, Temporal does nothing more; and an answer lost on the way (a Temporal restart,
 * a partition) is told by the run's status: paused, or no longer paused.
 */
async function setPaused(
  actors: Actors,
  op: number,
  workflowId: string,
  action: 'pause' | 'unpause',
  requestId: string,
): Promise<boolean> {
  try {
    await requestWorkflowPause(actors.temporal, action, {
      workflowId,
      identity: 'chaos-operator',
      reason: `the operator nemesis: ${action}`,
      requestId,
    });
    actors.journal.write({ event: 'nemesis', op, action, workflowId, ok: true });
    return true;
  } catch (error) {
    const status = await actors.temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then((described) => described.status.name)
      .catch(() => undefined);
    if (status !== undefined && (status === 'PAUSED') === (action === 'pause')) {
      actors.journal.write({ event: 'nemesis', op, action, workflowId, ok: true, status });
      return true;
    }
    actors.journal.write({
      event: 'nemesis',
      op,
      action,
      workflowId,
      error: (error as Error).message,
    });
    return false;
  }
}

/** How long the nemesis keeps asking to unpause through a Temporal restart or a partition. */
const UNPAUSE_PATIENCE_MS = 120_000;

/**
 * Pauses the job's run, has an operator cancel the job while it is paused (the answer is
 * journaled; a paused run takes no update, so it must be 409 `workflow-paused` and change
 * nothing), runs `meanwhile` (the opening lets the held call answer then), and unpauses the run,
 * asking again through process faults. Counts on the world what it did.
 */
export async function pauseWhileActing(
  actors: Actors,
  op: number,
  kind: string,
  target: { jobId: string; workflowId: string },
  meanwhile: () => Promise<void> = async () => undefined,
): Promise<void> {
  const { world } = actors;
  const [pauseId, unpauseId] = [randomUUID(), randomUUID()];
  const paused = await setPaused(actors, op, target.workflowId, 'pause', pauseId);
  try {
    if (!paused) return;
    const answer = await actors.client.send(
      op,
      kind,
      'POST',
      `/v1/operator/jobs/${target.jobId}/cancel`,
      { token: actors.operatorToken, body: { reason: 'cancelled while its workflow is paused' } },
    );
    world.pauses.cancelsWhilePaused += 1;
    if (answer.problem === 'workflow-paused') world.pauses.refusedAsPaused += 1;
    await meanwhile();
  } finally {
    // Also after a pause that seemed to fail: Temporal may have taken it, its answer lost.
    const giveUpAt = Date.now() + UNPAUSE_PATIENCE_MS;
    let unpaused = false;
    while (!(unpaused = await setPaused(actors, op, target.workflowId, 'unpause', unpauseId))) {
      if (Date.now() > giveUpAt) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    // Left paused, the job cannot end: invariant 6 says so, naming it.
    if (paused && unpaused) world.pauses.cycles += 1;
  }
}
