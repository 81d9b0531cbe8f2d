/**
 * The attempt policy of a job, as pure functions: which provider runs next, when a user's
 * request or an operator's resolution is refused, how long to wait between looks at an unknown
 * attempt, when to hand over to a new run, and how a job that ran out of providers fails (when
 * a failed attempt is retried is retryPolicy.ts). `jobWorkflow` applies these with Temporal;
 * they are tested without it.
 */
import { FAILURES, type FailureType } from '../domain/failures';
import { IN_FLIGHT_ATTEMPT_STATES, type TerminalJobStatus } from '../domain/job';
import type {
  AttemptSummary,
  CancelJobInput,
  JobPlan,
  PlannedProvider,
  RequestAttemptInput,
  ResolveAttemptInput,
} from './definitions';

/** A typed refusal: the failure type the caller sees, and why in words. */
export interface Refusal {
  type: FailureType;
  message: string;
  details?: unknown;
}

/** What the workflow knows when a request arrives. */
export interface JobView {
  jobId: string | null;
  plan: JobPlan | undefined;
  terminal: TerminalJobStatus | null;
  attempts: readonly AttemptSummary[];
  /** A user's earlier request is still waiting for its attempt to be created. */
  requestWaiting: boolean;
}

export const inFlight = (attempts: readonly AttemptSummary[]): AttemptSummary[] =>
  attempts.filter((a) => IN_FLIGHT_ATTEMPT_STATES.includes(a.state));

export const NOT_ADMITTED = 'the job has not been admitted yet';

/** What a refusal says of a job that has ended: one wording on every path that refuses. */
export function endedJobMessage(jobId: string | null, status: string): string {
  return `job ${jobId} is ${status}`;
}

/** What a cancel that came too late says: the job's outcome stands. */
export function notCancelledMessage(jobId: string | null, status: string): string {
  return `${endedJobMessage(jobId, status)}; it was not cancelled`;
}

/** Who cancelled, as the job's summary says it. */
export const cancelledBy = (cancel: CancelJobInput): string =>
  cancel.owner !== undefined ? 'its owner' : cancel.operator;

/** What a refusal says of the attempt that blocks another: which one, and in which state. */
export function blockingAttemptMessage(
  attempt: Pick<AttemptSummary, 'seq' | 'provider' | 'state'>,
): string {
  return `attempt ${attempt.seq} on ${attempt.provider} is ${attempt.state}`;
}

/** The job has ended, or is not admitted yet: nothing may be asked of it. */
export function notOpenRefusal(
  job: Pick<JobView, 'jobId' | 'plan' | 'terminal'>,
): Refusal | undefined {
  if (job.terminal)
    return { type: FAILURES.jobTerminal, message: endedJobMessage(job.jobId, job.terminal) };
  if (!job.plan) return { type: FAILURES.jobTerminal, message: NOT_ADMITTED };
  return undefined;
}

/** Why a user's "try again / use that provider" cannot be served, or nothing when it can. */
export function attemptRequestRefusal(
  job: JobView,
  request: RequestAttemptInput,
): Refusal | undefined {
  const { plan, terminal, attempts, jobId } = job;
  if (terminal) return notOpenRefusal(job);
  // Exclusive jobs run one attempt at a time; hedged ones may add one beside those running.
  const blocking = plan?.mode === 'hedged' ? undefined : inFlight(attempts)[0];
  if (!plan || blocking || job.requestWaiting) {
    return {
      type: FAILURES.attemptInFlight,
      message: blocking ? blockingAttemptMessage(blocking) : 'an attempt is about to start',
      details: blocking,
    };
  }
  if (attempts.length >= plan.maxAttempts)
    return {
      ...attemptLimitRefusal(attempts.length, `job ${jobId}`),
      details: { maxAttempts: plan.maxAttempts },
    };
  if (request.provider === undefined) return undefined;
  const provider = plan.compatible.find((p) => p.name === request.provider);
  if (!provider)
    return {
      type: FAILURES.unknownProvider,
      message: `provider ${request.provider} cannot run this job`,
    };
  if (provider.uncertified)
    return {
      type: FAILURES.providerNotCertified,
      message: `provider ${request.provider} may not run this job: ${provider.uncertified}`,
    };
  // Hedged attempts run side by side, so none of them may have side effects.
  if (plan.mode === 'hedged' && provider.sideEffects)
    return {
      type: FAILURES.hedgingNotAllowed,
      message: `provider ${request.provider} has side effects, so it may not run beside the attempts of a hedged job`,
    };
  return undefined;
}

function attemptLimitRefusal(made: number, job = 'the job'): Refusal {
  return {
    type: FAILURES.attemptLimitReached,
    message: `${job} has had ${made} attempts, the most a job may have`,
  };
}

/** Why an operator's resolution is refused at once (before the workflow waits on anything). */
export function resolutionRefusal(
  attempts: readonly AttemptSummary[],
  resolution: Pick<ResolveAttemptInput, 'attemptId' | 'outcome' | 'result'>,
): Refusal | undefined {
  const summary = attempts.find((a) => a.attemptId === resolution.attemptId);
  if (!summary || !IN_FLIGHT_ATTEMPT_STATES.includes(summary.state))
    return {
      type: FAILURES.attemptNotResolvable,
      message: `attempt ${resolution.attemptId} is ${summary?.state ?? 'not an attempt of this job'}; only an unknown attempt can be resolved`,
    };
  if (resolution.outcome === 'succeeded' && resolution.result === undefined)
    return {
      type: FAILURES.attemptNotResolvable,
      message: 'resolving as succeeded needs the result',
    };
  return undefined;
}

/** An attempt the workflow waited for has settled; only `unknown` may still be resolved. */
export function settledMeanwhileRefusal(summary: AttemptSummary): Refusal | undefined {
  if (summary.state === 'unknown') return undefined;
  return {
    type: FAILURES.attemptNotResolvable,
    message: `attempt ${summary.attemptId} settled as ${summary.state} meanwhile; only an unknown attempt can be resolved`,
  };
}

/** The decision for the next attempt: a provider (and where the plan goes on), or a refusal. */
export interface NextAttempt {
  provider?: PlannedProvider;
  /** The position in the plan after this decision. */
  nextInPlan: number;
  /** Set when a user's request was decided against. */
  refusal?: Refusal;
}

/**
 * Which provider runs next: a user's request first (a named provider, or "the next one"), else
 * the plan's next. Nothing once the job has had its most attempts.
 */
export function chooseNextAttempt(
  plan: JobPlan,
  attemptsMade: number,
  nextInPlan: number,
  request?: RequestAttemptInput,
): NextAttempt {
  if (attemptsMade >= plan.maxAttempts) {
    return {
      nextInPlan,
      ...(request ? { refusal: attemptLimitRefusal(attemptsMade) } : {}),
    };
  }
  const fromPlan = (): NextAttempt => ({
    provider: plan.providers[nextInPlan],
    nextInPlan: nextInPlan + 1,
  });
  if (!request) return fromPlan();
  const chosen =
    request.provider === undefined
      ? fromPlan()
      : { provider: plan.compatible.find((p) => p.name === request.provider), nextInPlan };
  if (chosen.provider) return chosen;
  return {
    nextInPlan: chosen.nextInPlan,
    refusal: { type: FAILURES.unknownProvider, message: 'no provider is left to try' },
  };
}

/** Whether the plan (or a waiting request) still offers an attempt within the job's cap. */
export function anotherAttemptPossible(
  plan: JobPlan,
  attemptsMade: number,
  nextInPlan: number,
  requestWaiting: boolean,
): boolean {
  return (nextInPlan < plan.providers.length || requestWaiting) && attemptsMade < plan.maxAttempts;
}

/** Where a new run of a job goes on in its plan: after the last provider earlier runs used. */
export function resumePosition(
  providers: readonly PlannedProvider[],
  attempts: readonly AttemptSummary[],
): number {
  const used = providers.map((p) => attempts.some((a) => a.provider === p.name));
  return used.lastIndexOf(true) + 1;
}

/**
 * The first delay of plans admitted before it was configurable (their histories hold no
 * value): one second, then and for ever, whatever DEFAULTS says now, or their replays would
 * wait differently from their runs.
 */
const FIRST_RECONCILE_DELAY_OF_OLD_PLANS_MS = 1_000;

export const firstReconcileDelayMs = (plan: JobPlan): number =>
  plan.reconcileFirstDelayMs ?? FIRST_RECONCILE_DELAY_OF_OLD_PLANS_MS;

/**
 * When an attempt unknown since `since` calls for an operator (`job.needs_operator`). Plans
 * admitted before webhooks hold no value: 15 minutes for them, for ever, for their replays' sake.
 */
export const operatorDueAt = (plan: JobPlan, since: string): number =>
  Date.parse(since) + (plan.needsOperatorAfterMs ?? NEEDS_OPERATOR_AFTER_MS_OF_OLD_PLANS);
const NEEDS_OPERATOR_AFTER_MS_OF_OLD_PLANS = 900_000;

/** The wait before the next look: the backoff, sooner if the activity asked, never below 100 ms. */
export const reconcileWaitMs = (delayMs: number, recheckInMs?: number): number =>
  Math.max(100, Math.min(delayMs, recheckInMs ?? delayMs));

/** The backoff doubles up to the plan's longest wait. */
export const nextReconcileDelayMs = (delayMs: number, plan: JobPlan): number =>
  Math.min(delayMs * 2, plan.reconcileMaxDelayMs);

/**
 * A workflow blocked on an unknown attempt sleeps: the workers' reconciler looks at the attempt
 * and wakes the workflow when it settles or first needs an operator. The workflow also looks
 * itself now and then (the plan says how often), in case a wake-up was lost while Temporal was
 * unreachable; plans admitted before the setting existed look hourly.
 */
export const blockedSelfLookMs = (plan: JobPlan): number =>
  plan.blockedSelfLookMs ?? BLOCKED_SELF_LOOK_MS_OF_OLD_PLANS;
const BLOCKED_SELF_LOOK_MS_OF_OLD_PLANS = 3_600_000;

/** A run hands over to a new one when Temporal suggests it or its history reached the limit. */
export function shouldContinueAsNew(
  history: { continueAsNewSuggested: boolean; historyLength: number },
  plan: JobPlan,
): boolean {
  return history.continueAsNewSuggested || history.historyLength >= plan.historyEventLimit;
}

/** How a job fails once no provider is left: why, with every failure on the way. */
export function exhaustedFailure(
  plan: JobPlan,
  failures: Array<Record<string, unknown>>,
): Record<string, unknown> {
  // Providers were left that could have run, but none certified for this contract.
  if (plan.skipped.length > 0)
    return {
      code: 'no-certified-provider',
      type: '/problems/no-certified-provider',
      attempts: failures,
      skipped: plan.skipped,
    };
  return { code: 'all_attempts_failed', attempts: failures };
}

/** The words an operator reads on a job blocked by an unknown attempt. */
export function blockedDescription(summary: AttemptSummary, since: string, detail?: string) {
  return `blocked: attempt ${summary.seq} on ${summary.provider} is unknown since ${since}${detail ? `: ${detail}` : ''}`;
}
