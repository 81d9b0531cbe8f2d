/**
 * How every entry point starts a job workflow (the API, the sweeper, `startJob`, and a service's
 * own workflow starting it as a child): one set of options, so that the id and the policies
 * never drift apart. Sandbox-safe (domain/ and the contract only): clients import it, and so
 * does workflow code, through src/workflow.ts.
 */
import { ParentClosePolicy } from '@temporalio/workflow';
import { DEFAULTS } from '../domain/defaults';
import { markdownText } from '../domain/displayText';
import type { JobStatus } from '../domain/job';
import { jobWorkflowId } from '../domain/workflowId';
import {
  AttemptCount,
  CURRENT_PATCH_EPOCH,
  JOB_WORKFLOW_TYPE,
  JobOwner,
  JobStatusAttribute,
  JobType,
  type JobWorkflowInput,
} from './definitions';

/**
 * A closed run that completed (or was cancelled) is never run again, but one that failed never
 * ran its job (its admission was refused, e.g. the row belongs to another entry point's intent),
 * so the row's job may get a new run: the same for a client's start and a parent's.
 */
const JOB_ID_REUSE_POLICY = 'ALLOW_DUPLICATE_FAILED_ONLY' as const;

export interface JobWorkflowStartFacts {
  ownerId: string;
  idempotencyKey: string;
  type: string;
  /** Known when the row exists (the API, the sweeper). */
  jobId?: string;
  /** The row's workflow id: a row keeps the id it was made with, whatever the derivation. */
  workflowId?: string;
  providers?: string[] | null;
  mode?: string;
  requestFingerprint?: string;
  status?: JobStatus;
  attemptCount?: number;
}

/**
 * Start options of a job's workflow.
 * - Conflict policy `USE_EXISTING`: a running run is that job's run; starting again is a no-op.
 * - Reuse policy: JOB_ID_REUSE_POLICY.
 */
export function jobWorkflowStartOptions(facts: JobWorkflowStartFacts, taskQueue: string) {
  // The Web UI renders summary and details as Markdown: what a client sent is shown literally.
  const [type, owner, key] = [facts.type, facts.ownerId, facts.idempotencyKey].map(markdownText);
  const args: JobWorkflowInput = {
    ...(facts.jobId ? { jobId: facts.jobId } : {}),
    ownerId: facts.ownerId,
    idempotencyKey: facts.idempotencyKey,
    ...(facts.requestFingerprint ? { requestFingerprint: facts.requestFingerprint } : {}),
    patchEpoch: CURRENT_PATCH_EPOCH,
  };
  return {
    workflowType: JOB_WORKFLOW_TYPE,
    workflowId: facts.workflowId ?? jobWorkflowId(facts.ownerId, facts.idempotencyKey),
    taskQueue,
    args: [args] as [JobWorkflowInput],
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
    workflowIdReusePolicy: JOB_ID_REUSE_POLICY,
    staticSummary: `${type} job${facts.jobId ? ` ${facts.jobId}` : ''} for ${owner} (key ${key})`,
    staticDetails: [
      ...(facts.jobId ? [`**job** ${facts.jobId}`] : []),
      `**owner** ${owner}`,
      `**idempotency key** ${key}`,
      ...(facts.providers
        ? [
            `**providers: ${facts.providers.map(markdownText).join(', ')}** (${markdownText(facts.mode ?? DEFAULTS.jobMode)})`,
          ]
        : []),
      ...(facts.requestFingerprint
        ? [`**fingerprint** ${facts.requestFingerprint.slice(0, 16)}…`]
        : []),
    ].join('  \n'),
    typedSearchAttributes: [
      { key: JobOwner, value: facts.ownerId },
      { key: JobType, value: facts.type },
      { key: JobStatusAttribute, value: facts.status ?? 'pending' },
      { key: AttemptCount, value: facts.attemptCount ?? 0 },
    ],
  };
}

/** The job a service's own workflow starts as its child: who it is for, and what to do. */
export interface JobChildOrder {
  ownerId: string;
  idempotencyKey: string;
  intent: NonNullable<JobWorkflowInput['intent']>;
}

/**
 * Start options of a job's workflow run as a child (`startChild`, from workflow code), under the
 * workflow id derived from (owner, key), so it is the job an HTTP create with that key makes.
 * Workflow code cannot hash: the child is given the intent, and its first activity computes the
 * fingerprint. A second start of the same job is refused by Temporal. The child is abandoned
 * when its parent closes: a parent that ends never kills a job in the middle of a charge.
 */
export function jobChildOptions(order: JobChildOrder, taskQueue: string) {
  const args: JobWorkflowInput = {
    ownerId: order.ownerId,
    idempotencyKey: order.idempotencyKey,
    intent: order.intent,
    patchEpoch: CURRENT_PATCH_EPOCH,
  };
  return {
    workflowId: jobWorkflowId(order.ownerId, order.idempotencyKey),
    taskQueue,
    args: [args] as [JobWorkflowInput],
    workflowIdReusePolicy: JOB_ID_REUSE_POLICY,
    parentClosePolicy: ParentClosePolicy.ABANDON,
  };
}
