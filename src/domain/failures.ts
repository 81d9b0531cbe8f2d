import { ApplicationFailure } from '@temporalio/common';
import type { ProblemType } from './problems';

/** One row of the failure catalogue. */
interface FailureRow {
  /** Its name on the wire: the type of the ApplicationFailure that carries it. */
  type: string;
  /** What the API answers a client whose request met it; without one it is a 500 `internal`. */
  problem?: ProblemType;
}

/**
 * Every failure that crosses the line between activities, the workflow and its clients, one
 * row each. Activities throw them and the workflow's update validators refuse with them, always
 * as final (non-retryable) ApplicationFailures: no retry of the step that met one could change
 * it. The API answers each with its problem type, whose status and title problems.ts gives.
 */
const FAILURE_CATALOGUE = {
  /** The job ended (won, failed, cancelled) or does not exist: nothing more may start for it. */
  jobNotOpen: { type: 'JobNotOpen' },
  /** The job row belongs to another (owner, key, intent) than this workflow was started for. */
  jobIdentityMismatch: { type: 'JobIdentityMismatch' },
  /** The workflow was started for a job row that does not exist. */
  jobMissing: { type: 'JobMissing' },
  /** The intent, owner or key is not valid: a retry cannot help. */
  invalidJob: { type: 'InvalidJob' },
  /** The same (owner, key) was already used for a different intent. */
  idempotencyKeyReuse: { type: 'IdempotencyKeyReuse', problem: 'idempotency-key-reuse' },
  /** An operator's result breaks the job type's contract. */
  invalidResult: { type: 'InvalidResult', problem: 'invalid-input' },
  /** The database refused a write for a reason that a retry cannot change (a CHECK, a bad value). */
  databaseRefused: { type: 'DatabaseRefused' },
  /** The job's plan names a provider this worker does not have: no retry of admission helps. */
  providerMissing: { type: 'ProviderMissing' },
  /** The provider takes no new attempt now: it cools down (Retry-After) or its breaker is open. */
  providerUnavailable: { type: 'ProviderUnavailable', problem: 'provider-unavailable' },
  /**
   * An operator released the key, and this workflow is not its next generation's: the message
   * names the generation (and workflow id) the key's next job runs as.
   */
  keyReleased: { type: 'KeyReleased' },
  /** An attempt of an exclusive job is still in flight (starting, running or unknown). */
  attemptInFlight: { type: 'AttemptInFlight', problem: 'attempt-in-flight' },
  /**
   * The attempt's provider call was begun by another execution of the call activity (its run
   * was terminated or reset, or the task ran twice): this one sent nothing and wrote nothing.
   */
  callBegunElsewhere: { type: 'CallBegunElsewhere' },
  /** The job has ended: no attempt or verdict changes it now. */
  jobTerminal: { type: 'JobTerminal', problem: 'job-terminal' },
  /** Only an unknown attempt of this job can be resolved by an operator. */
  attemptNotResolvable: { type: 'AttemptNotResolvable', problem: 'attempt-not-resolvable' },
  /** The provider asked for cannot run this job type. */
  unknownProvider: { type: 'UnknownProvider', problem: 'incompatible-provider' },
  /** The provider asked for is not certified for the contract in force. */
  providerNotCertified: { type: 'ProviderNotCertified', problem: 'provider-not-certified' },
  /** The job has had as many attempts as it may. */
  attemptLimitReached: { type: 'AttemptLimitReached', problem: 'attempt-limit-reached' },
  /** A provider with side effects may not run beside the attempts of a hedged job. */
  hedgingNotAllowed: { type: 'HedgingNotAllowed', problem: 'hedging-not-allowed' },
  /** Admission failed for a reason that carried no type of ours (told to a waiting `admit`). */
  admissionFailed: { type: 'AdmissionFailed' },
  /** An operator's resolution failed for a reason that carried no type of ours. */
  resolveFailed: { type: 'ResolveFailed' },
} as const satisfies Record<string, FailureRow>;

type Catalogue = typeof FAILURE_CATALOGUE;

/** Each failure's wire name, by its name in code: `FAILURES.jobNotOpen` is 'JobNotOpen'. */
export const FAILURES = Object.fromEntries(
  Object.entries(FAILURE_CATALOGUE).map(([name, row]) => [name, row.type]),
) as { [Name in keyof Catalogue]: Catalogue[Name]['type'] };

export type FailureType = Catalogue[keyof Catalogue]['type'];

const ROWS: readonly FailureRow[] = Object.values(FAILURE_CATALOGUE);

/** Every failure type: none heals by a retry of the step that met it. */
export const FINAL_FAILURES: readonly FailureType[] = ROWS.map((row) => row.type as FailureType);

/** The problem type the API answers a failure with: `internal` for one no client should meet. */
export function problemOfFailure(type: string | undefined | null): ProblemType {
  return ROWS.find((row) => row.type === type)?.problem ?? 'internal';
}

/**
 * A typed, final failure: what an activity throws and an update validator refuses with.
 * Workflow code and activities both build it here (ApplicationFailure is the SDK's common type).
 */
export function typedFailure(
  type: FailureType,
  message: string,
  details?: unknown,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    details: details === undefined ? undefined : [details],
    nonRetryable: true,
  });
}

/** The sentence every entry point uses when a key is reused for a different intent. */
export const KEY_REUSE_MESSAGE =
  'This idempotency key was already used for a different request; the existing job is unchanged.';
