/**
 * The reference model of one job's protocol, for the model-based test (test/modelBased.test.ts):
 * pure, no I/O. Given the model state and a step (create, duplicate, try again, a provider's
 * answer, an operator's resolve, a cancel, a signed callback), it says what the API must answer
 * and what the job and its attempts must settle to. Where the real system may legitimately
 * answer one of several ways, the prediction is a set.
 *
 * The providers of the model's stack, and what the model knows about them:
 * - `pay` and `pay-t` charge money (side effects, a status lookup, signed callbacks);
 * - `chat` and `chat-t` summarise (no side effects);
 * - the `-t` ones have a short attempt timeout, the others a long one. Every request is held at
 *   the simulator until the test lets it go (a `respond` step), so a `-t` attempt always times
 *   out first (it is `unknown` until its late answer) and an attempt on the others is `running`
 *   until it answers. What the provider does when let go (its fate) is drawn when the attempt
 *   starts.
 */
import type { AttemptState } from '../../src/domain/job';

export type ProviderName = 'pay' | 'pay-t' | 'chat' | 'chat-t';

export interface ProviderTraits {
  route: 'charge' | 'chat';
  /** The simulator model it asks for (chat), which the fault rule matches on. */
  model?: string;
  /** Its attempt timeout is short: a held request always times out first. */
  timesOut: boolean;
  sideEffects: boolean;
  /** Takes signed callbacks. */
  callbacks: boolean;
}

export const MODEL_PROVIDERS: Record<ProviderName, ProviderTraits> = {
  pay: { route: 'charge', timesOut: false, sideEffects: true, callbacks: true },
  'pay-t': { route: 'charge', timesOut: true, sideEffects: true, callbacks: true },
  chat: {
    route: 'chat',
    model: 'sim-steady',
    timesOut: false,
    sideEffects: false,
    callbacks: false,
  },
  'chat-t': {
    route: 'chat',
    model: 'sim-backup',
    timesOut: true,
    sideEffects: false,
    callbacks: false,
  },
};

/** What a provider does with a held request once the test lets it go. */
export type Fate =
  /** Does the work and answers success (a result that satisfies the contract). */
  | 'answers'
  /** Refuses before any work: 400, a definite failure. */
  | 'refuses'
  /** Does the work, then answers 500: ambiguous. */
  | 'fails-after-work'
  /** Does the work, then drops the connection: ambiguous. */
  | 'drops-after-work'
  /** Drops the connection before any work: ambiguous, and the status lookup finds nothing. */
  | 'drops-before-work';

export const FATES: readonly Fate[] = [
  'answers',
  'refuses',
  'fails-after-work',
  'drops-after-work',
  'drops-before-work',
];

export type JobKind = 'charge' | 'summary';
export type Mode = 'exclusive' | 'hedged';
export type TerminalStatus = 'succeeded' | 'failed' | 'cancelled';
export type JobStatus = 'pending' | 'running' | 'unknown' | TerminalStatus;

/** What the owner asks for: the job type, the plan and the mode. */
export interface Intent {
  kind: JobKind;
  plan: ProviderName[];
  mode: Mode;
}

export interface ModelAttempt {
  seq: number;
  provider: ProviderName;
  fate: Fate;
  /** Its request waits at the simulator's gate (the test has not let it go yet). */
  held: boolean;
  /** Its provider call is still awaited by the workflow (not timed out, not abandoned). */
  awaited: boolean;
  /** The worker that made its call was killed: its answer, when it comes, reaches nobody. */
  orphaned: boolean;
  /**
   * A "failed" (a signed callback, an operator's) came while its call could still answer: held
   * until the call ends (its success answer outranks it; any other end makes the attempt failed).
   */
  reportedFailure: boolean;
  state: AttemptState;
}

export interface ModelJob {
  intent: Intent;
  /** The next plan position the workflow takes (a named try-again does not move it). */
  nextInPlan: number;
  attempts: ModelAttempt[];
  terminal: TerminalStatus | null;
  /** The seq of the attempt whose result is the job's. */
  winner: number | null;
}

export interface ModelState {
  job: ModelJob | null;
}

export const initialModel = (): ModelState => ({ job: null });

/** The attempts a step starts, in the order their requests reach the provider. */
export interface Started {
  seq: number;
  provider: ProviderName;
  fate: Fate;
}

/** An HTTP answer the model allows: a status and, for problems, the allowed problem types. */
export interface Answer {
  status: number;
  /** Allowed `type`s of the problem (without the /problems/ prefix); any when undefined. */
  problems?: string[];
  /** For 200s of resolve and callback: the allowed attempt states in the body. */
  states?: AttemptState[];
}

export interface Prediction {
  answer: Answer;
  next: ModelState;
  started: Started[];
}

/** The job's status as the API derives it from the row and the attempts. */
export function jobStatus(job: ModelJob): JobStatus {
  if (job.terminal) return job.terminal;
  if (job.attempts.some((a) => a.state === 'unknown')) return 'unknown';
  return job.attempts.length > 0 ? 'running' : 'pending';
}

/** What the model says the API shows once the step's effects have settled. */
export interface JobPicture {
  status: JobStatus;
  completedBy: number | null;
  attempts: Array<{ seq: number; provider: ProviderName; state: AttemptState }>;
}

export function picture(job: ModelJob): JobPicture {
  return {
    status: jobStatus(job),
    completedBy: job.winner,
    attempts: job.attempts.map(({ seq, provider, state }) => ({ seq, provider, state })),
  };
}

const SETTLED: readonly AttemptState[] = ['succeeded', 'lost', 'failed', 'cancelled'];

/** Whether an attempt seen in state `from` can still become `to` (states only move forward). */
export function canBecome(from: AttemptState, to: AttemptState): boolean {
  if (from === to) return true;
  if (SETTLED.includes(from)) return false;
  if (from === 'unknown') return SETTLED.includes(to);
  if (from === 'running') return to !== 'starting';
  return true;
}

const clone = (state: ModelState): ModelState => structuredClone(state);

/** Draws fates for attempts the step starts, in order; `answers` once the list is used up. */
class FateSource {
  private index = 0;
  constructor(private readonly fates: readonly Fate[]) {}
  next(): Fate {
    return this.fates[this.index++] ?? 'answers';
  }
}

function startAttempt(
  job: ModelJob,
  provider: ProviderName,
  fates: FateSource,
  started: Started[],
): ModelAttempt {
  const seq = job.attempts.length + 1;
  const fate = fates.next();
  const timesOut = MODEL_PROVIDERS[provider].timesOut;
  const attempt: ModelAttempt = {
    seq,
    provider,
    fate,
    held: true,
    // A held request on a short-timeout provider always times out: unknown, no longer awaited.
    awaited: !timesOut,
    orphaned: false,
    reportedFailure: false,
    state: timesOut ? 'unknown' : 'running',
  };
  job.attempts.push(attempt);
  started.push({ seq, provider, fate });
  return attempt;
}

const sideEffectsOf = (job: ModelJob, attempt: ModelAttempt): boolean =>
  job.intent.kind === 'charge' || MODEL_PROVIDERS[attempt.provider].sideEffects;

/** A result reaches the compare-and-swap: it wins while the job is open, else it loses. */
function compareAndSwap(job: ModelJob, attempt: ModelAttempt): void {
  if (SETTLED.includes(attempt.state)) return; // a settled attempt's late answer changes nothing
  if (job.terminal === null) {
    attempt.state = 'succeeded';
    job.terminal = 'succeeded';
    job.winner = attempt.seq;
    endJob(job);
  } else {
    attempt.state = 'lost';
  }
}

/** The job ended: calls still awaited are abandoned, their attempts `unknown`. */
function endJob(job: ModelJob): void {
  for (const other of job.attempts) {
    if (other.awaited) {
      other.awaited = false;
      if (other.state === 'running') other.state = 'unknown';
    }
  }
}

/** The workflow is open and can still settle things (look up statuses, start attempts). */
const workflowOpen = (job: ModelJob): boolean => job.terminal === null;

/** What the provider's call comes to when the test lets the held request go. */
function release(job: ModelJob, attempt: ModelAttempt): void {
  attempt.held = false;
  const wasAwaited = attempt.awaited;
  attempt.awaited = false;
  if (SETTLED.includes(attempt.state)) return;
  const effects = sideEffectsOf(job, attempt);
  if (attempt.orphaned) {
    // Nobody hears the answer. A charge that was made is found by the workflow's status lookup
    // while the job is open; "no record" proves nothing until the call's late-result window
    // (minutes) is over, and a summary waits for that window too: the attempt stays unknown.
    const worked = attempt.fate !== 'refuses' && attempt.fate !== 'drops-before-work';
    if (effects && worked && workflowOpen(job)) compareAndSwap(job, attempt);
    return;
  }
  // A held "failed" callback: the call's success outranks it, any other end settles by it.
  if (attempt.reportedFailure && attempt.fate !== 'answers') {
    attempt.state = 'failed';
    return;
  }
  switch (attempt.fate) {
    case 'answers':
      compareAndSwap(job, attempt);
      return;
    case 'refuses':
      attempt.state = 'failed';
      return;
    case 'fails-after-work':
    case 'drops-after-work':
      if (!effects) {
        attempt.state = 'failed';
        return;
      }
      attempt.state = 'unknown';
      // The workflow looks the charge up (it happened): the record goes through the CAS.
      if (workflowOpen(job)) compareAndSwap(job, attempt);
      return;
    case 'drops-before-work':
      if (!effects) {
        attempt.state = 'failed';
        return;
      }
      attempt.state = 'unknown';
      // No record, and the call has ended: the lookup's "never processed" is believed.
      if (workflowOpen(job)) attempt.state = 'failed';
      return;
  }
  void wasAwaited;
}

/**
 * The workflow's own moves after something settled, until it waits again: an exclusive job runs
 * the next provider of its plan once nothing is in flight, or fails when none is left; a hedged
 * job starts the next provider when an awaited call ended (`callEnded`), and fails once nothing
 * is running, nothing is unknown and the plan is used up.
 */
function advance(job: ModelJob, fates: FateSource, started: Started[], callEnded: boolean): void {
  if (job.terminal) return;
  const { intent } = job;
  if (intent.mode === 'exclusive') {
    for (;;) {
      if (job.attempts.some((a) => a.state === 'running' || a.state === 'unknown')) return;
      const next = intent.plan[job.nextInPlan];
      if (next === undefined) {
        job.terminal = 'failed';
        return;
      }
      job.nextInPlan += 1;
      startAttempt(job, next, fates, started);
    }
  }
  let ended = callEnded;
  for (;;) {
    const running = job.attempts.some((a) => a.awaited);
    const next = intent.plan[job.nextInPlan];
    if ((ended || !running) && next !== undefined) {
      job.nextInPlan += 1;
      const attempt = startAttempt(job, next, fates, started);
      // A short timeout ends the call at once: the loop goes on to the next provider.
      ended = !attempt.awaited;
      continue;
    }
    if (!running && !job.attempts.some((a) => a.state === 'unknown')) job.terminal = 'failed';
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// The steps. Each returns the API's answer, the next state, and the attempts it starts (whose
// provider faults the test queues before it acts). `check` functions say when a step may run.

/** A new intent under a new key. */
export function create(state: ModelState, intent: Intent, fates: readonly Fate[]): Prediction {
  const next = clone(state);
  const job: ModelJob = { intent, nextInPlan: 0, attempts: [], terminal: null, winner: null };
  next.job = job;
  const started: Started[] = [];
  advance(job, new FateSource(fates), started, false);
  return { answer: { status: 201 }, next, started };
}

/** The same key and the same intent again: the same job, `200`, nothing changes. */
export function duplicate(state: ModelState): Prediction {
  return { answer: { status: 200 }, next: state, started: [] };
}

/** The same key with another intent: `409 idempotency-key-reuse`, nothing changes. */
export function mismatch(state: ModelState): Prediction {
  return {
    answer: { status: 409, problems: ['idempotency-key-reuse'] },
    next: state,
    started: [],
  };
}

/** Providers a try-again may name in the model (one the job type cannot use, too). */
export type TryAgainTarget = ProviderName | 'next';

/** A user's "try again" (`POST /v1/jobs/:id/attempts`), on the plan's next or a named provider. */
export function tryAgain(
  state: ModelState,
  target: TryAgainTarget,
  fates: readonly Fate[],
): Prediction {
  const next = clone(state);
  const job = next.job!;
  const started: Started[] = [];
  const refuse = (status: number, problem: string): Prediction => ({
    answer: { status, problems: [problem] },
    next: state,
    started: [],
  });
  if (job.terminal) return refuse(409, 'job-terminal');
  if (job.intent.mode === 'exclusive') {
    // In a settled picture an open exclusive job always has an attempt in flight.
    return refuse(409, 'attempt-in-flight');
  }
  const compatible = (provider: ProviderName): boolean =>
    (MODEL_PROVIDERS[provider].route === 'charge') === (job.intent.kind === 'charge');
  let provider: ProviderName | undefined;
  if (target === 'next') {
    provider = job.intent.plan[job.nextInPlan];
    if (provider === undefined) return refuse(400, 'incompatible-provider');
    job.nextInPlan += 1;
  } else {
    if (!compatible(target)) return refuse(400, 'incompatible-provider');
    provider = target;
  }
  const fateSource = new FateSource(fates);
  const attempt = startAttempt(job, provider, fateSource, started);
  advance(job, fateSource, started, !attempt.awaited);
  return { answer: { status: 202 }, next, started };
}

/** Attempts whose request is still held at the simulator: a `respond` step may let them go. */
export const heldAttempts = (state: ModelState): ModelAttempt[] =>
  state.job?.attempts.filter((a) => a.held) ?? [];

/** The provider lets attempt `seq`'s held request go: its fate happens. */
export function respond(state: ModelState, seq: number, fates: readonly Fate[]): Prediction {
  const next = clone(state);
  const job = next.job!;
  const attempt = job.attempts.find((a) => a.seq === seq)!;
  const wasAwaited = attempt.awaited;
  const started: Started[] = [];
  release(job, attempt);
  advance(job, new FateSource(fates), started, wasAwaited);
  return { answer: { status: 0 }, next, started };
}

/** Attempts an operator or a callback may settle: unknown ones. */
export const unknownAttempts = (state: ModelState): ModelAttempt[] =>
  state.job?.attempts.filter((a) => a.state === 'unknown') ?? [];

/** Attempts already settled: resolving one must be refused. */
export const settledAttempts = (state: ModelState): ModelAttempt[] =>
  state.job?.attempts.filter((a) => SETTLED.includes(a.state)) ?? [];

/**
 * An operator's verdict on attempt `seq` (`POST /v1/operator/attempts/:id/resolve`), or the
 * provider's signed callback (`POST /v1/callbacks/:provider`): both settle an unknown attempt the
 * same way: `failed`, or a result through the compare-and-swap, except that a `failed` (the
 * operator's or the callback's) for a call still held waits for that call (see
 * `reportedFailure`). A settled attempt cannot be resolved again (`409`).
 */
export function settle(
  state: ModelState,
  seq: number,
  outcome: 'succeeded' | 'failed',
  by: 'operator' | 'callback',
  fates: readonly Fate[],
): Prediction {
  const next = clone(state);
  const job = next.job!;
  const attempt = job.attempts.find((a) => a.seq === seq)!;
  if (attempt.state !== 'unknown') {
    // The workflow refuses (attempt-not-resolvable) or, once it has closed, the API does.
    return {
      answer: { status: 409, problems: ['attempt-not-resolvable', 'job-terminal'] },
      next: state,
      started: [],
    };
  }
  if (outcome === 'failed' && (attempt.held || attempt.orphaned)) {
    // Its call may still answer success: the report is held, and the attempt stays unknown. A
    // call whose worker was killed counts as out, even once the provider let it go: nobody heard
    // its end, so only its late-result window (minutes) ends it for the service.
    attempt.reportedFailure = true;
    return { answer: { status: 200, states: [attempt.state] }, next, started: [] };
  }
  if (outcome === 'failed') attempt.state = 'failed';
  else compareAndSwap(job, attempt);
  const settledAs = attempt.state;
  const started: Started[] = [];
  advance(job, new FateSource(fates), started, false);
  return { answer: { status: 200, states: [settledAs] }, next, started };
}

/** An operator cancels the job (`POST /v1/operator/jobs/:id/cancel`). */
export function cancel(state: ModelState): Prediction {
  const next = clone(state);
  const job = next.job!;
  if (job.terminal)
    return { answer: { status: 409, problems: ['job-terminal'] }, next: state, started: [] };
  job.terminal = 'cancelled';
  endJob(job);
  return { answer: { status: 200 }, next, started: [] };
}

/**
 * The worker process is killed (SIGKILL) and a new one started: calls it was making are lost
 * with it (their requests stay held at the simulator, the work may still happen there), an
 * awaited call's attempt becomes `unknown` once its heartbeat stops, and the new worker goes on
 * with the workflow.
 */
export function killWorker(state: ModelState, fates: readonly Fate[]): Prediction {
  const next = clone(state);
  const job = next.job!;
  let callEnded = false;
  for (const attempt of job.attempts) {
    if (!attempt.held || SETTLED.includes(attempt.state)) continue;
    attempt.orphaned = true;
    if (attempt.awaited) {
      attempt.awaited = false;
      attempt.state = 'unknown';
      callEnded = true;
    }
  }
  const started: Started[] = [];
  advance(job, new FateSource(fates), started, callEnded);
  return { answer: { status: 0 }, next, started };
}

/** A one-line description of the model's job, for failure messages. */
export function describeModel(state: ModelState): string {
  const job = state.job;
  if (!job) return 'no job';
  return `${job.intent.kind}/${job.intent.mode} plan=[${job.intent.plan.join(',')}] ${jobStatus(job)}${
    job.winner ? ` won by ${job.winner}` : ''
  }; attempts: ${job.attempts
    .map(
      (a) =>
        `${a.seq}:${a.provider}:${a.state}${a.held ? `(held,${a.fate}${a.orphaned ? ',orphaned' : ''})` : ''}`,
    )
    .join(' ')}`;
}
