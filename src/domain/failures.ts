import { ApplicationFailure } from '@temporalio/common';
import type { AttemptState, TerminalJobStatus } from './job';
import type { ProblemType } from './problems';

/**
 * The type of a row's details, written in the row (`details: detailsOf<{ sqlState: string }>()`):
 * a marker for the type checker, with nothing in it at run time.
 */
interface Details<Shape> {
  readonly shape?: Shape;
}

function detailsOf<Shape>(): Details<Shape> {
  return {};
}

/** One row of the failure catalogue. */
interface FailureRow {
  /** Its name on the wire: the type of the ApplicationFailure that carries it. */
  type: string;
  /**
   * What the API answers a client whose request met it; without one it is a 500 `internal`. The
   * problem type's row (problems.ts) gives the status, the title and the Retry-After.
   */
  problem?: ProblemType;
  /**
   * What its details say (the ApplicationFailure's first detail, a payload in workflow
   * histories: its JSON shape never changes); without it the failure carries none of its own.
   */
  details?: Details<unknown>;
}

/**
 * Every failure that crosses the line between activities, the workflow and its clients, one
 * row each. Activities throw them and the workflow's update validators refuse with them, always
 * as final (non-retryable) ApplicationFailures: no retry of the step that met one could change
 * it. The API answers each with its problem type, whose status and title problems.ts gives.
 */
const FAILURE_CATALOGUE = {
  /** The job ended (won, failed, cancelled) or does not exist: nothing more may start for it. */
  jobNotOpen: {
    type: 'JobNotOpen',
    details: detailsOf<{ terminalStatus: TerminalJobStatus | null; completedBy: string | null }>(),
  },
  /** The job row belongs to another (owner, key, intent) than this workflow was started for. */
  jobIdentityMismatch: { type: 'JobIdentityMismatch' },
  /** The workflow was started for a job row that does not exist. */
  jobMissing: { type: 'JobMissing' },
  /** The intent, owner or key is not valid: a retry cannot help. */
  invalidJob: { type: 'InvalidJob', details: detailsOf<Record<string, unknown> | undefined>() },
  /** The same (owner, key) was already used for a different intent. */
  idempotencyKeyReuse: {
    type: 'IdempotencyKeyReuse',
    problem: 'idempotency-key-reuse',
    details: detailsOf<{ jobId: string } | undefined>(),
  },
  /** An operator's result breaks the job type's contract. */
  invalidResult: { type: 'InvalidResult', problem: 'invalid-input' },
  /** The database refused a write for a reason that a retry cannot change (a CHECK, a bad value). */
  databaseRefused: { type: 'DatabaseRefused', details: detailsOf<{ sqlState: string }>() },
  /** The job's plan names a provider this worker does not have: no retry of admission helps. */
  providerMissing: { type: 'ProviderMissing', details: detailsOf<{ providers: string[] }>() },
  /** The provider takes no new attempt now: it cools down (Retry-After) or its breaker is open. */
  providerUnavailable: {
    type: 'ProviderUnavailable',
    problem: 'provider-unavailable',
    details: detailsOf<{
      provider: string;
      reason: string;
      /** When it takes attempts again (ISO 8601). */
      until: string;
      retryAfterSeconds: number;
    }>(),
  },
  /**
   * An operator released the key, and this workflow is not its next generation's: the message
   * names the generation (and workflow id) the key's next job runs as.
   */
  keyReleased: {
    type: 'KeyReleased',
    details: detailsOf<{ releasedJobId: string; nextGeneration: number; workflowId: string }>(),
  },
  /** An attempt of an exclusive job is still in flight (starting, running or unknown). */
  attemptInFlight: {
    type: 'AttemptInFlight',
    problem: 'attempt-in-flight',
    /** The attempt that blocks, when one does (none: one is about to start). */
    details: detailsOf<
      { attemptId?: string; seq?: number; provider?: string; state?: AttemptState } | undefined
    >(),
  },
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
  attemptLimitReached: {
    type: 'AttemptLimitReached',
    problem: 'attempt-limit-reached',
    details: detailsOf<{ maxAttempts: number } | undefined>(),
  },
  /**
   * The owner's budget has no room for the attempt's worst case (or the worst case cannot be
   * known): no call. The details carry the gate's figures.
   */
  budgetExceeded: {
    type: 'BudgetExceeded',
    problem: 'budget-exceeded',
    details: detailsOf<{ provider: string; budget: Record<string, unknown> }>(),
  },
  /** A provider with side effects may not run beside the attempts of a hedged job. */
  hedgingNotAllowed: { type: 'HedgingNotAllowed', problem: 'hedging-not-allowed' },
  /** Admission failed for a reason that carried no type of ours (told to a waiting `admit`). */
  admissionFailed: { type: 'AdmissionFailed' },
  /** An operator's resolution failed for a reason that carried no type of ours. */
  resolveFailed: { type: 'ResolveFailed' },
} as const satisfies Record<string, FailureRow>;

type Catalogue = typeof FAILURE_CATALOGUE;

/** A failure's name in code: `providerUnavailable`. */
export type FailureName = keyof Catalogue;

/** What a failure's details are, by its name in code (undefined: it carries none). */
export type FailureDetails<Name extends FailureName> = Catalogue[Name] extends {
  details: Details<infer Shape>;
}
  ? Shape
  : undefined;

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

/**
 * A refusal of the catalogue, thrown below the activities (the database layer, the rules): its
 * row and its typed details. At the activity boundary it becomes the typed failure the workflow
 * reads (typedFailureOf), the only translation there is.
 */
export class Refusal<Name extends FailureName = FailureName> extends Error {
  constructor(
    readonly failure: Name,
    message: string,
    readonly details: FailureDetails<Name>,
    /**
     * What this side counts it under (the provider skip counter's cause): never sent, since the
     * details' shape is fixed by the histories that hold it.
     */
    readonly countedAs?: string,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

/** Whether an error is a refusal of one of these rows (of any row, with none named). */
export function isRefusal<Name extends FailureName>(
  error: unknown,
  ...names: Name[]
): error is Refusal<Name> {
  return error instanceof Refusal && (names.length === 0 || names.includes(error.failure as Name));
}

/** The typed, final failure a refusal is on the wire: its row's type, its message and details. */
export function typedFailureOf(refusal: Refusal): ApplicationFailure {
  return typedFailure(FAILURES[refusal.failure], refusal.message, refusal.details);
}

/**
 * The details of a typed failure read back (in the workflow, the service), typed by its row; undefined
 * when the failure is not of that row or carries none. Pure: safe in workflow code.
 */
export function failureDetails<Name extends FailureName>(
  failure: ApplicationFailure | undefined,
  name: Name,
): FailureDetails<Name> | undefined {
  if (failure?.type !== FAILURES[name]) return undefined;
  // The payload was written from this row's type (typedFailureOf, typedFailure): read as such.
  return failure.details?.[0] as FailureDetails<Name> | undefined;
}

/** The sentence every entry point uses when a key is reused for a different intent. */
export const KEY_REUSE_MESSAGE =
  'This idempotency key was already used for a different request; the existing job is unchanged.';
