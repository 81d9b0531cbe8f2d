/**
 * Everything both sides of the job workflow agree on: its name, input, queries and search
 * attributes. Clients, the API and the worker import these; so does the workflow itself.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { AttemptState, JobStatus } from '../domain/job';

export const DEFAULT_TASK_QUEUE = 'onejob';
export const JOB_WORKFLOW_TYPE = 'jobWorkflow';

export interface JobWorkflowInput {
  /** Set when the job row exists already (the HTTP path); absent when the workflow creates it. */
  jobId?: string;
  ownerId: string;
  idempotencyKey: string;
  /**
   * The intent's fingerprint. A child workflow started from workflow code (which cannot hash)
   * may leave it out: the first activity computes it from `intent`.
   */
  requestFingerprint?: string;
  /** The intent, when the workflow itself writes the job row (the Temporal-native path). */
  intent?: {
    type: string;
    input: Record<string, unknown>;
    providers: string[] | null;
    mode: 'exclusive' | 'hedged';
  };
}

export interface Admission {
  jobId: string;
}
/**
 * Sent with update-with-start by `startJob`: refused at once when the fingerprint differs from
 * the one this workflow was started with; otherwise answers the job id once the row exists.
 */
export const admitUpdate = defineUpdate<Admission, [{ requestFingerprint: string }]>('admit');
/** Who this workflow is for, also answerable after it has closed. */
export const admissionQuery = defineQuery<{
  jobId: string | null;
  requestFingerprint: string | null;
}>('admission');

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

/** Sent by a provider call that finished after its attempt timed out, and by result callbacks. */
export const attemptSettledSignal = defineSignal<[{ attemptId: string }]>('attemptSettled');

export interface RequestAttemptInput {
  /** The provider to try; default: the next one in the plan. */
  provider?: string;
}
/** A user's "try again / use the fallback". Refused while an attempt is in flight (exclusive) or the job ended. */
export const requestAttemptUpdate = defineUpdate<AttemptSummary, [RequestAttemptInput]>(
  'requestAttempt',
);

export interface ResolveAttemptInput {
  attemptId: string;
  outcome: 'failed' | 'succeeded';
  reason: string;
  /** With `succeeded`: the result, which goes through the same compare-and-swap as any other. */
  result?: unknown;
  operator: string;
}
export interface ResolveAttemptResult {
  attemptId: string;
  state: AttemptState;
}
/** An operator settles an unknown attempt out of band. */
export const resolveAttemptUpdate = defineUpdate<ResolveAttemptResult, [ResolveAttemptInput]>(
  'resolveAttempt',
);

export interface CancelJobInput {
  reason: string;
  operator: string;
}
export const cancelJobUpdate = defineUpdate<JobWorkflowStatus, [CancelJobInput]>('cancelJob');

/** Failure types of refused updates, mapped to problem types by the API. */
export const REFUSALS = {
  attemptInFlight: 'AttemptInFlight',
  jobTerminal: 'JobTerminal',
  attemptNotResolvable: 'AttemptNotResolvable',
  unknownProvider: 'UnknownProvider',
  idempotencyKeyReuse: 'IdempotencyKeyReuse',
} as const;
