/**
 * Pausing and unpausing a job's workflow through Temporal (1.30 and later), for operators whose
 * Web UI or `temporal` CLI has no such button: the same WorkflowService calls, with who and why.
 * A paused job is open and untouched (the sweeper leaves it alone); every action on it is
 * answered 409 `workflow-paused` until it is unpaused.
 */
import { isGrpcServiceError, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { addJobNote, findJob } from '../db/jobs';
import type { Pool } from '../db/pool';
import { causeChain } from '../domain/causeChain';
import { isUuid } from '../domain/identity';
import { endedJobMessage } from '../workflows/policy';
import { ServiceError } from './errors';

export type PauseAction = 'pause' | 'unpause';

interface PauseDeps {
  pool: Pool;
  temporal: Client;
}

/** Who asks and why: Temporal keeps both on the paused or unpaused event. */
export interface PauseRequest {
  operator: string;
  reason: string;
}

/** The gRPC status Temporal answers a pause with when the server has none (or it is off). */
const UNIMPLEMENTED = 12;

/** Whether Temporal refused a pause or unpause because this server has none (or it is off). */
export function isPauseUnavailable(error: unknown): boolean {
  return engineAnswer(error)?.code === UNIMPLEMENTED;
}

/**
 * Temporal's own call, as the Web UI or a newer `temporal` CLI makes it. Asked again with the
 * same request id, Temporal does nothing more.
 */
export async function requestWorkflowPause(
  temporal: Client,
  action: PauseAction,
  request: { workflowId: string; identity: string; reason: string; requestId?: string },
): Promise<void> {
  const call = {
    namespace: temporal.options.namespace,
    ...request,
    requestId: request.requestId ?? randomUUID(),
  };
  if (action === 'pause') await temporal.workflowService.pauseWorkflowExecution(call);
  else await temporal.workflowService.unpauseWorkflowExecution(call);
}

function engineAnswer(error: unknown): { code: number; details: string } | undefined {
  for (const current of causeChain(error))
    if (isGrpcServiceError(current)) return { code: current.code, details: current.details };
  return undefined;
}

/**
 * Pauses or unpauses the job's workflow; undefined when there is no such job. The job keeps a
 * note of it (the reason, not the operator's name: owners read notes). A refusal by Temporal
 * (no pause on this server, already paused, not paused) comes back as a one-line error.
 */
export async function setJobWorkflowPaused(
  deps: PauseDeps,
  jobId: string,
  action: PauseAction,
  request: PauseRequest,
): Promise<{ jobId: string; workflowId: string } | undefined> {
  if (!isUuid(jobId)) return undefined;
  const job = await findJob(deps.pool, jobId);
  if (!job) return undefined;
  if (job.terminalStatus && action === 'pause')
    throw new ServiceError('job-terminal', endedJobMessage(job.id, job.terminalStatus));
  try {
    await requestWorkflowPause(deps.temporal, action, {
      workflowId: job.workflowId,
      identity: request.operator,
      reason: request.reason,
    });
  } catch (error) {
    const answer = engineAnswer(error);
    if (answer?.code === UNIMPLEMENTED)
      throw new Error(
        `this Temporal server does not pause workflows (it needs 1.30 or later, with frontend.WorkflowPauseEnabled): ${answer.details}`,
      );
    if (answer)
      throw new Error(`Temporal refused to ${action} job ${job.id}'s workflow: ${answer.details}`);
    throw error;
  }
  await addJobNote(deps.pool, job.id, {
    event: action === 'pause' ? 'workflow_paused' : 'workflow_unpaused',
    reason: request.reason,
  });
  return { jobId: job.id, workflowId: job.workflowId };
}
