import {
  CancellationScope,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { describeCosts, type Money } from '../domain/cost';
import { FAILURES } from '../domain/failures';
import { IN_FLIGHT_ATTEMPT_STATES, type JobStatus, type TerminalJobStatus } from '../domain/job';
import type { FailedCall } from '../domain/retries';
import { databaseSteps, LOCAL_ADMISSION } from './activityStubs';
import { failedCallOf, failureEntry } from './attemptFailures';
import { AttemptRequests, type AttemptRequest, type AttemptToRun } from './attemptRequests';
import { Deferrals } from './deferrals';
import {
  AttemptCount,
  JobStatusAttribute,
  type AttemptOutcome,
  type AttemptSummary,
  type CarriedJobState,
  type JobEnding,
  type JobPlan,
  type JobWorkflowInput,
  type JobWorkflowStatus,
} from './definitions';
import { patchQuestion, retryRulesOf, type PatchQuestion } from './patchEpochs';
import { chooseNextAttempt, NOT_ADMITTED, resumePosition } from './policy';
import { refuse } from './refusals';
import type { RetryRuleChanges } from './retryPolicy';

/** The status and attempt count the run's start (or continue-as-new) already set, if both. */
function shownAtStart(): { status: JobStatus; count: number } | undefined {
  const attributes = workflowInfo().typedSearchAttributes;
  const status = attributes.get(JobStatusAttribute) as JobStatus | undefined;
  const count = attributes.get(AttemptCount);
  return status !== undefined && count !== undefined ? { status, count } : undefined;
}

/**
 * What one run of a job workflow knows and shows: the job's attempts, how it ended, what
 * someone asked of it, and what it tells operators. The handlers (handlers.ts) and the attempt
 * loops (exclusiveLoop.ts, hedgedLoop.ts and what they call) share it, and change it only
 * through its methods; it starts from what an earlier run carried over, if any.
 */
export class JobRun {
  readonly status: JobWorkflowStatus;
  private readonly attemptList: AttemptSummary[];
  /** Set once admitted (or carried); handlers that run earlier see it undefined and refuse. */
  private admittedPlan: JobPlan | undefined;
  private admittedId: string | null;
  private ending: { status: TerminalJobStatus; winner: string | null } | null = null;
  private admissionRefusal: { type: string; message: string } | undefined;
  /** Attempts someone asked the workflow to look at again (late result, callback, operator). */
  private readonly nudgedIds: Set<string>;
  /** Users' "try again" requests, until each is served or refused. */
  readonly requests = new AttemptRequests();
  private planPosition: number;
  readonly failures: Array<Record<string, unknown>>;
  private readonly unknownSinceById: Record<string, string>;
  private readonly runningCallScopes = new Map<string, CancellationScope>();
  /** Every attempt being run right now, so that a cancel can wait for each to settle its row. */
  readonly runningAttempts = new Set<Promise<unknown>>();
  /** Providers the plan passes by for now: once nothing else is left, the job waits for them. */
  readonly deferrals: Deferrals;
  /** Attempts this run has sent `job.needs_operator` for (the database keeps it to once anyway). */
  private readonly operatorsCalled = new Set<string>();
  /** What each ended call cost, as far as this run has heard: shown to operators. */
  readonly costs = new Map<string, Money>();
  /** Attempt 1 when admission wrote its row: the loop launches it before anything else. */
  private admittedFirstAttempt: AttemptSummary | undefined;
  /** How this run reaches the database (local activities, unless it began before they did). */
  readonly db: ReturnType<typeof databaseSteps>;
  /** Whether this run takes a patch's path (unless its epoch settled it, asked of its history). */
  readonly patched: PatchQuestion;
  readonly retryRules: RetryRuleChanges;
  private shown: { status: JobStatus; count: number } | undefined;
  /** Numbers taken for attempts whose rows are still being written (not yet in `attempts`). */
  private readonly numbersBeingWritten = new Set<number>();

  constructor(readonly input: JobWorkflowInput) {
    this.patched = patchQuestion(input.patchEpoch);
    this.retryRules = retryRulesOf(this.patched);
    // Asked first, before any command: replay of an older history then takes its old path.
    const current = this.patched(LOCAL_ADMISSION);
    this.db = databaseSteps(current);
    // The search attributes the run started with are already shown: upserting them again
    // would only add a history event (older runs did, and their replay must match).
    if (current) this.shown = shownAtStart();
    const carried = input.carried;
    this.status = {
      jobId: carried?.plan.jobId ?? input.jobId ?? '',
      status: 'pending',
      attempts: carried?.attempts ?? [],
      waitingOn: 'admission',
      needsOperator: false,
      run: (carried?.runs ?? 0) + 1,
    };
    this.attemptList = this.status.attempts;
    this.admittedPlan = carried?.plan;
    this.admittedId = carried?.plan.jobId ?? input.jobId ?? null;
    this.nudgedIds = new Set<string>(carried?.nudged ?? []);
    this.planPosition = carried?.nextInPlan ?? 0;
    this.failures = carried?.failures ?? [];
    this.unknownSinceById = carried?.unknownSince ?? {};
    this.deferrals = new Deferrals(carried?.deferred);
  }

  // What the run knows, for reading; each change goes through a method below.
  get attempts(): readonly AttemptSummary[] {
    return this.attemptList;
  }
  get plan(): JobPlan | undefined {
    return this.admittedPlan;
  }
  get jobId(): string | null {
    return this.admittedId;
  }
  get terminal(): TerminalJobStatus | null {
    return this.ending?.status ?? null;
  }
  get winner(): string | null {
    return this.ending?.winner ?? null;
  }
  get admissionError(): { type: string; message: string } | undefined {
    return this.admissionRefusal;
  }
  get nudged(): ReadonlySet<string> {
    return this.nudgedIds;
  }
  get nextInPlan(): number {
    return this.planPosition;
  }
  get runningCalls(): ReadonlyMap<string, CancellationScope> {
    return this.runningCallScopes;
  }

  /** The attempt as this run knows it now (each change replaces it: see apply). */
  attempt(attemptId: string): AttemptSummary | undefined {
    return this.attemptList.find((a) => a.attemptId === attemptId);
  }

  /** Admission wrote attempt 1's row: the loop launches it before anything else. */
  firstAttemptWritten(first: AttemptSummary | undefined): void {
    this.admittedFirstAttempt = first;
  }

  /** Admission refused the job: a waiting admission update is told why. */
  admissionFailed(refusal: { type: string; message: string }): void {
    this.admissionRefusal = refusal;
  }

  /** The plan this run follows, once admitted. */
  admit(plan: JobPlan): void {
    this.admittedPlan = plan;
    this.admittedId = plan.jobId;
    this.status.jobId = plan.jobId;
  }

  /** A new run of a job whose earlier run ended goes on after the attempts that run made. */
  resumeAfter(earlier: readonly AttemptSummary[], plan: JobPlan): void {
    this.attemptList.push(...earlier);
    this.planPosition = resumePosition(plan.providers, this.attemptList);
  }

  /** An attempt's row is written (a user's request for it is fulfilled): it runs now. */
  attemptWritten(summary: AttemptSummary, request?: AttemptRequest): void {
    this.attemptList.push(summary);
    this.deferrals.over(summary.provider);
    if (request) this.requests.fulfil(request, summary);
  }

  /** Someone asked the workflow to look at an attempt again. */
  nudge(attemptId: string): void {
    this.nudgedIds.add(attemptId);
  }

  /** The workflow is looking at a nudged attempt: the nudge is served. */
  nudgeServed(attemptId: string): void {
    this.nudgedIds.delete(attemptId);
  }

  /** Whether this run has told the owner's webhooks that the attempt waits for an operator. */
  operatorCalledFor(attemptId: string): boolean {
    return this.operatorsCalled.has(attemptId);
  }

  /** This run tells the owner's webhooks that the attempt waits for an operator. */
  callingOperator(attemptId: string): void {
    this.operatorsCalled.add(attemptId);
  }

  /** A provider call is running in `scope` (cancelled when the job ends or is cancelled). */
  callStarted(attemptId: string, scope: CancellationScope): void {
    this.runningCallScopes.set(attemptId, scope);
  }

  callEnded(attemptId: string): void {
    this.runningCallScopes.delete(attemptId);
  }

  /** When the attempt was first seen unknown (kept across runs for operators). */
  unknownSince(attemptId: string): string {
    return (this.unknownSinceById[attemptId] ??= new Date().toISOString());
  }

  /**
   * Takes the next attempt number: one above every attempt of the job and every number taken
   * for a row still being written. A hedge launched while a row is written gets the next one,
   * and a number stays taken once a row has it, even when a row written before it was refused
   * (its number then stays unused: a count of attempts would hand out the number twice).
   */
  takeAttemptNumber(): number {
    const seq = Math.max(0, ...this.attempts.map((a) => a.seq), ...this.numbersBeingWritten) + 1;
    this.numbersBeingWritten.add(seq);
    return seq;
  }

  /** The row of a taken number was written, or refused: it is no longer being written. */
  attemptNumberSettled(seq: number): void {
    this.numbersBeingWritten.delete(seq);
  }

  /** Attempts made and being made: what the job's cap counts. */
  attemptsTaken(): number {
    return this.attempts.length + this.numbersBeingWritten.size;
  }

  /**
   * Shows the job's state to operators: the status query, the details, the search attributes.
   * `details` is `waitingOn` as the Web UI shows it (Markdown): outside text in it escaped.
   */
  show(next: JobStatus, waitingOn: string, needsOperator = false, details = waitingOn): void {
    this.status.status = next;
    this.status.waitingOn = waitingOn;
    this.status.needsOperator = needsOperator;
    const cost =
      this.costs.size > 0
        ? ` · ${describeCosts(this.costs, this.winner, this.attempts.length)}`
        : '';
    setCurrentDetails(`${needsOperator ? `${details} — needs an operator` : details}${cost}`);
    // Search attributes only when they change: every upsert is a history event.
    if (this.shown?.status === next && this.shown.count === this.attempts.length) return;
    this.shown = { status: next, count: this.attempts.length };
    upsertSearchAttributes([
      { key: JobStatusAttribute, value: next },
      { key: AttemptCount, value: this.attempts.length },
    ]);
  }

  /** The job has ended as the database says; the first ending heard of stands. */
  end(ending: JobEnding | { status: TerminalJobStatus | null; completedBy: string | null }): void {
    if (!ending.status || this.ending) return;
    this.ending = { status: ending.status, winner: ending.completedBy };
  }

  /**
   * An activity reported where an attempt (and maybe its job) stands now; a first failure is
   * recorded. Returns the attempt as it now is: the run replaces its summary rather than change
   * it in place, so whoever holds an earlier one asks `attempt()` for the news.
   */
  apply(attemptId: string, outcome: AttemptOutcome): AttemptSummary {
    const at = this.attemptList.findIndex((a) => a.attemptId === attemptId);
    const known = this.attemptList[at];
    if (!known) throw new Error(`attempt ${attemptId} is not one this run knows`);
    if (outcome.state === 'failed' && known.state !== 'failed')
      this.failures.push(failureEntry(known, outcome.error));
    const settled: AttemptSummary = { ...known, state: outcome.state };
    this.attemptList[at] = settled;
    if (outcome.cost) this.costs.set(attemptId, outcome.cost);
    this.end({ status: outcome.jobStatus, completedBy: outcome.winnerAttemptId });
    return settled;
  }

  /** What an attempt's call reported of its failure, in the shape the retry table reads. */
  failedCall(attemptId: string): FailedCall | undefined {
    return failedCallOf(this.failures, attemptId);
  }

  admittedJobId(): string {
    if (!this.jobId) refuse(FAILURES.jobTerminal, NOT_ADMITTED);
    return this.jobId;
  }

  /** The next provider: a user's request first (claimed here, so it is served once), else the plan's. */
  nextProvider(admitted: JobPlan): AttemptToRun | undefined {
    const first = this.admittedFirstAttempt;
    this.admittedFirstAttempt = undefined;
    // Admission wrote attempt 1 for the plan's first provider: that is the first attempt, and a
    // request that came before it is served by the next one, as if it had come a moment later.
    if (first && first.provider === admitted.providers[0]?.name && this.attempts.length === 0) {
      this.planPosition = 1;
      return { provider: admitted.providers[0], created: first };
    }
    const request = this.requests.pending();
    const next = chooseNextAttempt(admitted, this.attempts.length, this.planPosition, request);
    this.planPosition = next.nextInPlan;
    if (request) this.requests.claim(request, next.refusal);
    return next.provider && { provider: next.provider, ...(request ? { request } : {}) };
  }

  /** The state to hand to the next run. */
  snapshot(admitted: JobPlan): CarriedJobState {
    const deferred = this.deferrals.carried();
    return {
      plan: admitted,
      attempts: this.attemptList,
      nextInPlan: this.planPosition,
      failures: this.failures,
      nudged: [...this.nudged].filter((id) =>
        this.attempts.some((a) => a.attemptId === id && IN_FLIGHT_ATTEMPT_STATES.includes(a.state)),
      ),
      unknownSince: this.unknownSinceById,
      ...(deferred ? { deferred } : {}),
      runs: this.status.run,
      waitingOn: this.status.waitingOn,
      needsOperator: this.status.needsOperator,
    };
  }

  /** Keeps a running attempt in view until it is done. */
  track(running: Promise<void>): Promise<void> {
    this.runningAttempts.add(running);
    // Bookkeeping only: whoever awaits `running` sees its failure (an unhandled one would fail the task).
    running.then(
      () => this.runningAttempts.delete(running),
      () => this.runningAttempts.delete(running),
    );
    return running;
  }
}
