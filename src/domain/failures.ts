/**
 * Every failure type that crosses the line between activities, the workflow and its clients,
 * in one list. Activities throw them (as non-retryable ApplicationFailures), the workflow reads
 * them, its update validators refuse with them, and the API maps them to problem types.
 */
export const FAILURES = {
  /** The job ended (won, failed, cancelled) or does not exist: nothing more may start for it. */
  jobNotOpen: 'JobNotOpen',
  /** The job row belongs to another (owner, key, intent) than this workflow was started for. */
  jobIdentityMismatch: 'JobIdentityMismatch',
  /** The workflow was started for a job row that does not exist. */
  jobMissing: 'JobMissing',
  /** The intent, owner or key is not valid: a retry cannot help. */
  invalidJob: 'InvalidJob',
  /** The same (owner, key) was already used for a different intent. */
  idempotencyKeyReuse: 'IdempotencyKeyReuse',
  /** An operator's result breaks the job type's contract. */
  invalidResult: 'InvalidResult',
  /** The database refused a write for a reason that a retry cannot change (a CHECK, a bad value). */
  databaseRefused: 'DatabaseRefused',
  /** The job's plan names a provider this worker does not have: no retry of admission helps. */
  providerMissing: 'ProviderMissing',
  /** The provider takes no new attempt now: it cools down (Retry-After) or its breaker is open. */
  providerUnavailable: 'ProviderUnavailable',
  /**
   * An operator released the key, and this workflow is not its next generation's: the message
   * names the generation (and workflow id) the key's next job runs as.
   */
  keyReleased: 'KeyReleased',

  // Refusals of workflow updates (validators), each a problem type for the API.
  attemptInFlight: 'AttemptInFlight',
  jobTerminal: 'JobTerminal',
  attemptNotResolvable: 'AttemptNotResolvable',
  unknownProvider: 'UnknownProvider',
  providerNotCertified: 'ProviderNotCertified',
  attemptLimitReached: 'AttemptLimitReached',
  /** A provider with side effects may not run beside the attempts of a hedged job. */
  hedgingNotAllowed: 'HedgingNotAllowed',
  /** Admission failed for a reason that carried no type of ours (told to a waiting `admit`). */
  admissionFailed: 'AdmissionFailed',
  /** An operator's resolution failed for a reason that carried no type of ours. */
  resolveFailed: 'ResolveFailed',
} as const;

export type FailureType = (typeof FAILURES)[keyof typeof FAILURES];

/** Failures of database activities that no retry can heal: the workflow acts on them at once. */
export const NON_RETRYABLE_DB_FAILURES: readonly FailureType[] = [
  FAILURES.jobNotOpen,
  FAILURES.jobIdentityMismatch,
  FAILURES.jobMissing,
  FAILURES.invalidJob,
  FAILURES.idempotencyKeyReuse,
  FAILURES.invalidResult,
  FAILURES.databaseRefused,
  FAILURES.attemptNotResolvable,
  FAILURES.providerMissing,
  FAILURES.providerUnavailable,
  FAILURES.keyReleased,
];

/** The sentence every entry point uses when a key is reused for a different intent. */
export const KEY_REUSE_MESSAGE =
  'This idempotency key was already used for a different request; the existing job is unchanged.';
