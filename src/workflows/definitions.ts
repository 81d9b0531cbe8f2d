/**
 * Everything both sides of the job workflow agree on: its name, input, queries and search
 * attributes. Clients, the API and the worker import these; so does the workflow itself.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Money } from '../domain/cost';
import type { AttemptState, JobMode, JobStatus, TerminalJobStatus } from '../domain/job';
import type { FailedCall, RetrySettings } from '../domain/retries';
import type { WebhookRetry } from '../domain/webhooks';

export const JOB_WORKFLOW_TYPE = 'jobWorkflow';
export const WEBHOOK_SENDER_WORKFLOW_TYPE = 'webhookSenderWorkflow';

export interface PlannedProvider {
  name: string;
  timeoutMs: number;
  heartbeatTimeoutMs: number;
  sideEffects: boolean;
  /** Set when the provider may not run this job now: not certified for the contract in force. */
  uncertified?: string;
  /**
   * How its failed attempts are retried on it (the retry table, domain/retries.ts). Absent: never
   * (`retry: false`, and plans admitted before retries existed, whose histories must replay).
   */
  retry?: RetrySettings;
}

/** Everything the workflow needs to run a job, read once at admission and carried across runs. */
export interface JobPlan {
  jobId: string;
  requestFingerprint: string;
  type: string;
  mode: JobMode;
  /** The plan, primary first, without the providers that may not run it. */
  providers: PlannedProvider[];
  /** Every provider that could serve this job type, for a user's explicit request. */
  compatible: PlannedProvider[];
  /** Hedged mode: silence after which the next attempt starts. */
  hedgeDelayMs: number;
  /** Providers left out of the plan because they are not certified for the current contract. */
  skipped: Array<{ provider: string; reason: string }>;
  terminalStatus: TerminalJobStatus | null;
  completedBy: string | null;
  /** Attempts that already exist (a run that continues a job whose earlier run ended). */
  attempts: AttemptSummary[];
  /** No more attempts than this, whoever asks. */
  maxAttempts: number;
  /** Continue-as-new once the history has this many events (or when Temporal suggests it). */
  historyEventLimit: number;
  /** The longest wait between two looks at an unknown attempt. */
  reconcileMaxDelayMs: number;
  /**
   * The wait after the first look at an unknown attempt, doubling from there. Absent in plans
   * admitted before it existed (histories and carried state): then 1 s, as it always was.
   */
  reconcileFirstDelayMs?: number;
  /**
   * How often a run blocked on an unknown attempt looks at it itself, between the reconciler's
   * looks (policy.ts). Absent in plans admitted before it existed.
   */
  blockedSelfLookMs?: number;
  /**
   * An attempt unknown this long sends `job.needs_operator` to its owner's webhooks. Absent in
   * plans admitted before webhooks existed: DEFAULTS.needsOperatorAfterMs.
   */
  needsOperatorAfterMs?: number;
  /**
   * The job's last attempt, when it failed and the job is still open: a new run of the job (its
   * earlier run terminated, say) decides on its retry as the earlier run would have, and makes
   * it when that run planned to, if it had noted it.
   */
  lastFailure?: LastFailure;
  /**
   * Whether the owner had a webhook endpoint at admission: if not, the run does not ask for its
   * ending's events (announcements.ts). Absent in plans admitted before it existed: ask.
   */
  ownerHasWebhooks?: boolean;
}

/** A failed attempt as a new run weighs it for a retry (retryPolicy.ts resumedRetry). */
export interface LastFailure {
  attemptId: string;
  /** What the attempt's record says of its failure. */
  failure: FailedCall;
  /** When the earlier run planned to retry it, as it noted (`retry_scheduled`); none if not. */
  retryAt?: string;
}

/**
 * What admission returns: the plan, and attempt 1 when admission also wrote its row (a job with
 * no attempts yet, whose run asked for it), so that the first provider call needs no activity
 * task of its own before it. Histories admitted without it take the `startAttempt` path.
 */
export interface AdmittedJob extends JobPlan {
  firstAttempt?: AttemptSummary;
}

/**
 * What one run of a job workflow hands to the next when it continues-as-new: everything it
 * knows, so the next run goes on exactly where this one stopped.
 */
export interface CarriedJobState {
  plan: JobPlan;
  attempts: AttemptSummary[];
  /** The next provider of the plan to try. */
  nextInPlan: number;
  /** Definite failures so far, for the job's failure record. */
  failures: Array<Record<string, unknown>>;
  /** Attempts someone asked the workflow to look at again that it has not looked at yet. */
  nudged: string[];
  /** Since when each blocking attempt has been unknown. */
  unknownSince: Record<string, string>;
  /** Providers passed by while they took no new attempt: until when, and why. */
  deferred?: Record<string, { until: string; reason: string }>;
  /** How many runs came before this one. */
  runs: number;
  /** What the job was shown waiting on, so the next run shows the same from its first moment. */
  waitingOn?: string;
  needsOperator?: boolean;
}

/** The patch epoch of the runs this code starts (patchEpochs.ts says what it settles). */
export const CURRENT_PATCH_EPOCH = 2;

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
  /** Set by continue-as-new: the state of the run before this one (admission is not repeated). */
  carried?: CarriedJobState;
  /** The patch epoch of the code that started the job; absent: every patch asked (patchEpochs.ts). */
  patchEpoch?: number;
}

/** One event of one job to deliver: what the webhook sender workflow is started with. */
export interface WebhookSenderInput {
  jobId: string;
  eventKey: string;
  retry: WebhookRetry;
  /** As JobWorkflowInput's: the patch epoch of the code that started the sender. */
  patchEpoch?: number;
}

export interface Admission {
  jobId: string;
  /** The job had ended when the update was answered (absent from runs before it was added). */
  ended?: boolean;
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

/**
 * A short workflow that reads, in PostgreSQL, which job a key names now: `startJob` asks it once
 * a key's job has ended, since an operator may have released the key since (a closed workflow
 * cannot know).
 */
export const KEY_JOBS_WORKFLOW_TYPE = 'keyJobsWorkflow';

export interface KeyJobsInput {
  ownerId: string;
  idempotencyKey: string;
}

export interface KeyJobs {
  /** The key's unreleased job: the one a create with the key answers with. */
  live: {
    jobId: string;
    generation: number;
    workflowId: string;
    requestFingerprint: string;
  } | null;
  /** The key's highest generation (0 when it has no job). */
  latestGeneration: number;
}

export interface AttemptSummary {
  attemptId: string;
  seq: number;
  provider: string;
  state: AttemptState;
}

/** What an activity reports of an attempt: its state now, and the job's if it has ended. */
export interface AttemptOutcome {
  attemptId: string;
  state: AttemptState;
  winnerAttemptId: string | null;
  jobStatus: TerminalJobStatus | null;
  /** Why it failed or is unknown, as recorded on the attempt. */
  error?: Record<string, unknown>;
  /** What its call cost, once the call has ended and the cost is known. */
  cost?: Money;
}

/** What a look at an unknown attempt found, beyond its outcome. */
export interface ReconcileOutcome extends AttemptOutcome {
  /** In words: why it is still unknown. */
  detail?: string;
  /** Nothing will settle it by itself: an operator (or a signed callback) has to. */
  needsOperator?: boolean;
  /** Look again no later than this (e.g. when a "never processed" becomes believable). */
  recheckInMs?: number;
}

/** What one look at an unknown attempt found, and whether it is news for its workflow. */
export interface AttemptLook {
  outcome: ReconcileOutcome;
  /** This look is the first to find that only an operator can settle the attempt. */
  operatorNewlyNeeded: boolean;
}

/** How a job ended, as the row says: the workflow reports exactly this. */
export interface JobEnding {
  status: TerminalJobStatus;
  completedBy: string | null;
}

export interface JobWorkflowStatus {
  jobId: string;
  status: JobStatus;
  attempts: AttemptSummary[];
  /** What the workflow is waiting on, in words, for operators. */
  waitingOn: string;
  /** True when nothing will settle the blocking attempt by itself: an operator has to. */
  needsOperator: boolean;
  /** This run's number in the chain of continued runs (1 for the first). */
  run: number;
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
  /**
   * An operator's `failed` given while the attempt's call may still land: held on the attempt,
   * it settles it once the call is over, unless the call answers success first.
   */
  held?: true;
}

/** What a resolution came to: the attempt's state, and whether a `failed` is held. */
export function resolutionResult(
  attemptId: string,
  state: AttemptState,
  outcome: ResolveAttemptInput['outcome'],
): ResolveAttemptResult {
  return {
    attemptId,
    state,
    ...(outcome === 'failed' && state === 'unknown' ? { held: true as const } : {}),
  };
}
/** An operator settles an unknown attempt out of band. */
export const resolveAttemptUpdate = defineUpdate<ResolveAttemptResult, [ResolveAttemptInput]>(
  'resolveAttempt',
);

/** A cancel, by an operator (any job) or by the job's owner (`POST /v1/jobs/:id/cancel`). */
export type CancelJobInput = { reason: string } & (
  { operator: string; owner?: undefined } | { owner: string; operator?: undefined }
);

/** What the job's row records of a cancel: who (an operator, or the owner), and why. */
export const cancellationRecord = (cancel: CancelJobInput): Record<string, string> => ({
  code: 'cancelled',
  ...(cancel.owner !== undefined ? { owner: cancel.owner } : { operator: cancel.operator }),
  reason: cancel.reason,
});
export const cancelJobUpdate = defineUpdate<JobWorkflowStatus, [CancelJobInput]>('cancelJob');
