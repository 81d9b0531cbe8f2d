/**
 * Everything both sides of the job workflow agree on: its name, input, queries and search
 * attributes. Clients, the API and the worker import these; so does the workflow itself.
 */
import { defineQuery } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { AttemptState, JobStatus } from '../domain/job';

export const DEFAULT_TASK_QUEUE = 'onejob';
export const JOB_WORKFLOW_TYPE = 'jobWorkflow';

export interface JobWorkflowInput {
  jobId: string;
  ownerId: string;
  idempotencyKey: string;
  requestFingerprint: string;
}

export interface AttemptSummary {
  attemptId: string;
  seq: number;
  provider: string;
  state: AttemptState;
}

export interface JobWorkflowStatus {
  jobId: string;
  status: JobStatus;
  attempts: AttemptSummary[];
  /** What the workflow is waiting on, in words, for operators. */
  waitingOn: string;
}

export interface JobWorkflowResult {
  jobId: string;
  status: 'succeeded' | 'failed' | 'cancelled';
  completedBy: string | null;
}

export const statusQuery = defineQuery<JobWorkflowStatus>('status');

// Registered on the server (`--search-attribute` on the dev server) so operators can filter,
// e.g. JobStatus = "unknown".
export const JobOwner = defineSearchAttributeKey('JobOwner', SearchAttributeType.KEYWORD);
export const JobType = defineSearchAttributeKey('JobType', SearchAttributeType.KEYWORD);
export const JobStatusAttribute = defineSearchAttributeKey(
  'JobStatus',
  SearchAttributeType.KEYWORD,
);
export const AttemptCount = defineSearchAttributeKey('AttemptCount', SearchAttributeType.INT);

export const JOB_SEARCH_ATTRIBUTES = [JobOwner, JobType, JobStatusAttribute, AttemptCount] as const;
