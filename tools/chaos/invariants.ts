import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { canonicalJson } from '../../src/domain/canonicalJson';
import { isOpenRunStatus } from '../../src/domain/runStatus';
import { doesWork } from '../simulator/faults';
import type { Exchange, FaultWindow, Journal } from './journal';
import { ledgerOf, requestsOf, type LedgerEntryView, type LoggedRequest } from './operations';
import type { World } from './world';

/** A read of one job: `/v1/jobs/<id>`, perhaps with `?wait=`. */
const JOB_READ = /^\/v1\/jobs\/([0-9a-f-]{36})(?:\?.*)?$/;

/** The promises the campaign checks, numbered as docs/fault-campaign.md lists them. */
export const INVARIANTS: Record<number, string> = {
  1: 'one live job per (owner, key), one workflow id per job, across both entry points; a key makes another job only after an operator released it; a job named to its owner is never a 404 to them',
  2: 'at most one winner per job; a recorded result never changes',
  3: 'every result that arrived after the job was settled is a logged race, never the result',
  4: 'no intent charged twice: at most one charge per job and one request per provider key; a succeeded charge job has exactly one; a key released only once nothing of its job can take effect, and a generation released uncharged stays uncharged',
  5: 'an unknown attempt fails only through a status lookup after its call ended, a callback or an operator',
  6: 'every job is terminal or waits on an operator; job rows and workflows agree',
  7: 'a reused key with another intent is a 409 that leaves its job untouched; a replay returns the original job',
  8: 'every 5xx a 503 with Retry-After, and none (nor a dropped connection) outside process faults and partitions; every request a client retried ended in exactly one job',
  9: 'a job fails only when no retry and no healthy fallback was left, judged from what its providers received and answered',
  10: "a charge that happened is never hidden: each key its provider charged, at most once, is an attempt the job's answer shows succeeded, lost or unknown (never failed or cancelled but by an operator's verdict); nothing reaches a provider under an attempt that never began",
  11: 'replay as lookup: every replay began inside its key window, and an unknown attempt of a replay provider whose charge was made, its answer lost, was settled by the service, without an operator',
  12: "budgets hold: every attempt of a budgeted owner reserved its worst case, an unknown one holds it until it settles, a period's reserved and spent never pass the budget by more than one worst case, and a job fails for its budget only when its figures left no room; no fallback or hedge dearer than its price ceiling's multiple of the primary",
};

export interface Violation {
  invariant: number;
  message: string;
  /** Job ids, keys or attempt ids: the journal lines about them are shown with the violation. */
  needles: string[];
}

export interface JobRow {
  id: string;
  owner_id: string;
  idempotency_key: string;
  workflow_id: string;
  job_type: string;
  input: unknown;
  /** The providers asked for, primary first. */
  provider_plan: string[];
  mode: string;
  terminal_status: string | null;
  completed_by: string | null;
  result: unknown;
  /** What the service noted on the job: providers skipped, retries scheduled, hedging paused. */
  notes: unknown[];
  /** Why it failed or was cancelled (`code`, message and details). */
  failure: { code?: string } | null;
  key_generation: number;
  key_release: { at: string } | null;
  finished_at: Date | null;
}

export interface AttemptRow {
  id: string;
  job_id: string;
  seq: number;
  provider: string;
  state: string;
  error: {
    code?: string;
    certainty?: string;
    settledBecause?: string;
    /** What the provider said of the failure (its `x-should-retry` among it), when it answered. */
    provider?: unknown;
    /** Set when the attempt was `unknown` before this settled it: not its call's own verdict. */
    earlier?: unknown;
  } | null;
  started_at: Date | null;
  call_ended_at: Date | null;
  finished_at: Date | null;
}

/** After its part is back, how long answers may still show the fault (pools reconnecting). */
export const FAULT_GRACE_MS = 5_000;

/** Ways an unknown attempt may end as failed, with the evidence each needs. */
const SETTLED_BY = new Set([
  'never_processed',
  // A replay of the very request under its key, refused in the provider's words (issue 59).
  'replay_refused',
  'never_sent',
  'orphaned',
  'provider_callback',
  'operator',
  'cancelled',
]);

/**
 * A provider's call window, as reconciliation reads it: a call can no longer answer once it
 * has ended or its late-result window has closed, and a "gone" is believed only the grace after.
 */
export interface CallWindow {
  lateResultMs: number;
  graceMs: number;
}

/**
 * When, by the reconciler's own rule, an attempt's call can no longer answer and a "gone" or a
 * "no record" about it is believed: the call's recorded end, or, with none recorded (its worker
 * died, or PostgreSQL was down when the end was to be written), its start plus the late-result
 * window; then the grace. A call that never started has nothing to wait for (-Infinity).
 */
export function believableAt(
  attempt: Pick<AttemptRow, 'started_at' | 'call_ended_at'>,
  window: CallWindow,
): number {
  if (!attempt.started_at) return -Infinity;
  const callOver =
    attempt.call_ended_at?.getTime() ?? attempt.started_at.getTime() + window.lateResultMs;
  return callOver + window.graceMs;
}

/**
 * Whether an attempt was settled only once its call could no longer answer (see believableAt).
 * A side-effect-free attempt failed as `call_gone`, and any attempt failed as
 * `never_processed`, must have been.
 */
export function settledAfterCallOver(
  attempt: AttemptRow,
  windows: Record<string, CallWindow>,
): boolean {
  const window = windows[attempt.provider];
  if (!window || !attempt.started_at || !attempt.finished_at) return false;
  return attempt.finished_at.getTime() >= believableAt(attempt, window);
}

/**
 * A side-effect-free attempt still `unknown` when the settle step's operators came to it, after
 * the service had its time to settle it (settle.ts): the service must settle such an attempt
 * itself once its call is over, but its job waited on an operator instead.
 */
export interface LeftToOperator {
  id: string;
  jobId: string;
  provider: string;
  /** How long it had been believably over then (see believableAt; from the settle's start at the earliest). */
  pastBelievableMs: number;
}

/**
 * Provider keys that reached a provider more than once on a route that does the work (a charge,
 * a chat completion, a message: every route but the status lookup), with how many times. Every
 * request counts, executed, replayed or faulted: each attempt's call is sent once
 * (providerCall.ts; the chat SDKs run with their own retries off), whatever its provider, and a
 * chat API, which does not deduplicate, would do the work and bill it again.
 */
export function providerKeysSentTwice(
  requests: LoggedRequest[],
  /**
   * Replays PostgreSQL recorded, by attempt (issue 59): each is one more request allowed under
   * the key, the first request sent again byte for byte inside its key window. A re-send with
   * no row is one nobody recorded, and may have been sent after the window.
   */
  replays: ReadonlyMap<string, number> = new Map(),
): Map<string, number> {
  const sent = new Map<string, number>();
  for (const request of requests)
    if (doesWork(request.route))
      sent.set(request.idempotencyKey, (sent.get(request.idempotencyKey) ?? 0) + 1);
  return new Map([...sent].filter(([key, times]) => times > 1 + (replays.get(key) ?? 0)));
}

/** A replay a look sent (attempt_replays), with the window its attempt's first send allowed. */
export interface ReplayRow {
  attempt_id: string;
  began_at: Date;
  /** attempt_sends.replay_until: first sent + the key window − the margin, on PostgreSQL's clock. */
  replay_until: Date;
  verdict: string | null;
}

/** Replays that began at or after the end of their window (PostgreSQL's trigger refuses them). */
export function replaysPastTheirWindow(replays: ReplayRow[]): ReplayRow[] {
  return replays.filter((replay) => replay.began_at.getTime() >= replay.replay_until.getTime());
}

/** How an attempt of a replay provider that was looked at by replay was settled. */
export type ReplaySettledBy =
  /** Never replayed: its own answer (or nothing) settled it, never unknown for a look. */
  | 'not_replayed'
  /** A replay brought back the stored answer, and the compare-and-swap took it. */
  | 'replay'
  /** A replay was refused in the provider's own words: nothing was done under the key. */
  | 'replay_refused'
  /** An operator settled it during traffic, racing the service as a real one may. */
  | 'operator_in_traffic'
  /** An operator settled it after its job had ended (no replay is sent for an ended job). */
  | 'operator_after_job_ended'
  /** The settle step's operator, after the service had its time. */
  | 'operator'
  /** Its late answer, a cancel: anything else. */
  | 'other'
  | 'unknown';

/**
 * Invariant 11 for one attempt of a replay provider: how it was settled, and why that broke the
 * promise of issue 59, if it did. The promise: an attempt whose charge its provider made and
 * whose answer it kept as a success (its first request did not meet a 5xx after the work, which
 * a replay only gets again), looked at by replay, is settled by the service without an operator,
 * unless its job ended first (PostgreSQL refuses a replay for an ended job) or an operator
 * settled it during traffic. The campaign's lost answers all come inside the window: its
 * processing delays and partitions are far shorter than the window (stack.ts, REPLAY_WINDOW).
 */
export function replaySettlement(facts: {
  attempt: AttemptRow;
  /** The replays recorded for it. */
  replays: ReplayRow[];
  /** Its provider's records of its key. */
  record: ProviderRecord | undefined;
  job: { terminal_status: string | null; finished_at: Date | null };
  /** Whether, and when, the campaign's operators settled it. */
  operator: 'traffic' | 'settle' | undefined;
}): { by: ReplaySettledBy; violation?: string } {
  const { attempt, replays, record, job, operator } = facts;
  if (replays.length === 0) return { by: 'not_replayed' };
  const jobEndedFirst =
    job.finished_at !== null &&
    (attempt.finished_at === null || job.finished_at.getTime() < attempt.finished_at.getTime());
  const code = attempt.error?.code;
  const by: ReplaySettledBy =
    operator === 'traffic'
      ? 'operator_in_traffic'
      : operator === 'settle' || code === 'operator'
        ? jobEndedFirst
          ? 'operator_after_job_ended'
          : 'operator'
        : attempt.state === 'unknown'
          ? 'unknown'
          : attempt.state === 'failed' && code === 'replay_refused'
            ? 'replay_refused'
            : (attempt.state === 'succeeded' || attempt.state === 'lost') &&
                replays.some((r) => r.verdict === 'answered')
              ? 'replay'
              : 'other';
  const firstFault = record?.requests[0]?.fault;
  const keptASuccess = (record?.executions ?? 0) > 0 && firstFault !== 'fail_after';
  if (!keptASuccess || operator === 'traffic' || jobEndedFirst) return { by };
  const settledByService =
    (attempt.state === 'succeeded' || attempt.state === 'lost') && by !== 'operator';
  if (settledByService) return { by };
  const verdicts = replays.map((r) => r.verdict ?? 'unanswered').join(', ');
  const what =
    by === 'operator'
      ? 'settled by an operator'
      : attempt.state === 'unknown'
        ? 'still unknown'
        : `${attempt.state}${code ? ` (${code})` : ''}`;
  return {
    by,
    violation: `attempt ${attempt.id} on ${attempt.provider}: its provider made the charge and kept its answer (its first request met ${firstFault ?? 'no fault'}), ${replays.length} replay(s) looked at it (${verdicts}), yet it was ${what}`,
  };
}

/**
 * Every charge a provider's ledger shows, by the job it was for (a provider key is
 * `<job id>:<attempt seq>`): one entry per execution. A retry on the same provider sends a new
 * key, and a call refused before any work (a 429, an outage's 503) is logged but never executed,
 * so a job charged once has one entry however often it was refused.
 */
export function chargesByJob(ledger: LedgerEntryView[]): Map<string, string[]> {
  const charges = new Map<string, string[]>();
  for (const entry of ledger) {
    if (entry.route !== 'charge') continue;
    const jobId = entry.idempotencyKey.split(':')[0]!;
    const keys = charges.get(jobId) ?? [];
    for (let i = 0; i < entry.executions; i++) keys.push(entry.idempotencyKey);
    if (keys.length > 0) charges.set(jobId, keys);
  }
  return charges;
}

/** What invariant 9 needs of the service's configuration: as the campaign's stack set it. */
export interface RetryRules {
  /** Each provider's tries in a row (its `retry.maxAttempts`), or false when it never retries. */
  triesInARow: Record<string, number | false>;
  /** The job's attempt cap (ONEJOB_MAX_ATTEMPTS_PER_JOB). */
  maxAttemptsPerJob: number;
}

type Note = { event?: unknown; provider?: unknown; afterAttempt?: unknown; until?: unknown };
const notesOf = (job: Pick<JobRow, 'notes'>): Note[] =>
  job.notes.filter((note): note is Note => typeof note === 'object' && note !== null);

/**
 * How the job ran: a hedged job whose hedging budget was spent runs exclusive, and says so in a
 * note (admission decides it once).
 */
function modeRun(job: Pick<JobRow, 'mode' | 'notes'>): string {
  const paused = notesOf(job).some((note) => note.event === 'hedging_paused');
  return job.mode === 'hedged' && paused ? 'exclusive' : job.mode;
}

/**
 * What a provider's own records hold of one of our attempt keys (an attempt's id is its
 * idempotency key): every call request it received under it, with the fault it met and the
 * status it answered, and how often it did the work. Status lookups are not calls.
 */
export interface ProviderRecord {
  requests: Array<{ fault?: string; answered?: number }>;
  executions: number;
}

/** The providers' records, by key: their request logs and ledgers put together. */
export function providerRecords(
  ledger: LedgerEntryView[],
  requests: LoggedRequest[],
): Map<string, ProviderRecord> {
  const records = new Map<string, ProviderRecord>();
  const of = (key: string): ProviderRecord => {
    let record = records.get(key);
    if (!record) records.set(key, (record = { requests: [], executions: 0 }));
    return record;
  };
  for (const request of requests)
    if (doesWork(request.route))
      of(request.idempotencyKey).requests.push({
        ...(request.fault === undefined ? {} : { fault: request.fault }),
        ...(request.answered === undefined ? {} : { answered: request.answered }),
      });
  for (const entry of ledger)
    if (doesWork(entry.route)) of(entry.idempotencyKey).executions += entry.executions;
  return records;
}

/** Refusals that say "not now" before any work: rate limited, overloaded, timed out waiting. */
const REFUSED_FOR_NOW = new Set([408, 429, 503, 529]);
/** Answers of a provider in trouble after it may have worked (a gateway's, a crash's). */
const SERVER_TROUBLE = new Set([500, 502, 504]);

/**
 * Failure codes of an attempt settled after its call, by other evidence than the call itself:
 * a status lookup's "never processed", a callback, an operator, a chat call given up for gone.
 * The plan moves on after these (docs/attempts.md): no retry is owed.
 */
const SETTLED_LATER = new Set([
  'never_processed',
  'provider_callback',
  'operator',
  'call_gone',
  'replay_refused',
]);

/** Whether an attempt was failed by its own call (not unknown first, not settled later). */
function failedByItsOwnCall(attempt: AttemptRow): boolean {
  return (
    attempt.state === 'failed' &&
    attempt.error?.earlier === undefined &&
    !SETTLED_LATER.has(attempt.error?.code ?? '')
  );
}

/**
 * Why, by its provider's records, an attempt's failure may heal on the same provider, or
 * undefined when it may not. Judged from what the provider received and answered, never by the
 * service's own retry table:
 * - nothing reached the provider, and the attempt never began: its request never left;
 * - nothing reached the provider of a call that began: it was lost on the way (unreachable);
 * - every request under its key was refused before any work, "not now" (408, 429, 503, 529);
 * - for a provider without side effects, one that was answered 500, 502 or 504, or never
 *   answered (a dropped connection): worth another try, nothing having been charged.
 * `sideEffects`: the provider charges (its failures after work leave the attempt unknown).
 */
export function healingFailure(
  attempt: Pick<AttemptRow, 'started_at'>,
  record: ProviderRecord | undefined,
  sideEffects: boolean,
): string | undefined {
  const requests = record?.requests ?? [];
  if (requests.length === 0)
    return attempt.started_at
      ? 'its call began, and its provider received nothing'
      : 'it was never sent: its call never began, and its provider received nothing';
  const answers = requests.map((request) => request.answered);
  if (
    (record?.executions ?? 0) === 0 &&
    answers.every((a) => a !== undefined && REFUSED_FOR_NOW.has(a))
  )
    return `its provider refused it before any work (${answers.join(', ')})`;
  if (!sideEffects && answers.some((a) => a === undefined || SERVER_TROUBLE.has(a)))
    return `its provider answered ${answers.map((a) => a ?? 'nothing').join(', ')}`;
  return undefined;
}

/** Attempts in a row on `provider` at the end of `attempts` (the last one's tries there). */
function triesInARowAtEnd(attempts: readonly AttemptRow[], provider: string): number {
  let tries = 0;
  for (let i = attempts.length - 1; i >= 0 && attempts[i]!.provider === provider; i--) tries += 1;
  return tries;
}

/**
 * Whether the service's rules (docs/attempts.md) left a retry after the last of `made`: its
 * provider's tries in a row not spent, and the job's cap with room for it beside one attempt for
 * each provider of the plan not tried yet.
 */
function retryLeft(
  made: readonly AttemptRow[],
  plan: readonly string[],
  rules: RetryRules,
): { tries: number; most: number } | undefined {
  const last = made.at(-1);
  if (!last) return undefined;
  const most = rules.triesInARow[last.provider];
  if (most === undefined || most === false) return undefined;
  const tries = triesInARowAtEnd(made, last.provider);
  const untried = plan.filter((name) => !made.some((a) => a.provider === name)).length;
  if (tries >= most || made.length + 1 + untried > rules.maxAttemptsPerJob) return undefined;
  return { tries, most };
}

/**
 * Why a failed job broke invariant 9, or undefined when it did not. A job fails only when
 * nothing was left that could have saved it, as the service promises (docs/attempts.md, "Retry,
 * then fall back"), and only exclusive jobs retry (a hedged job's answer to a failure is its next
 * provider, at once). Judged from the attempt rows and the providers' own records (what each
 * received under an attempt's key and what it answered), not by the service's retry table:
 *
 * (a) its last attempt was failed by its own call (not `unknown` first, not settled later by a
 *     status lookup, a callback or an operator), its provider's records say the failure may heal
 *     (healingFailure: never sent, refused before any work "not now", or for a provider without
 *     side effects a server's trouble or no answer), its provider had tries in a row left, and
 *     the cap had room for the retry beside one attempt for each provider of the plan not yet
 *     tried; yet no retry was scheduled after it. A retry that was scheduled and then gave way to
 *     the user's "try again" is the user's choice;
 * (b) a provider of its plan was never tried, though the cap had room, and the service never
 *     noted that it passed it by (`provider_skipped`: not certified, cooling down, its breaker
 *     open);
 * (c) an earlier attempt was never sent (it never began, and its provider received nothing),
 *     a retry was left after it, and the next attempt went to another provider with no retry
 *     scheduled: the provider was passed by without being called.
 *
 * `attempts` are the job's, ordered by `seq`; `records` the providers' records by key;
 * `sideEffects` names the providers that charge.
 */
export function failedWithHelpLeft(
  job: Pick<JobRow, 'id' | 'terminal_status' | 'mode' | 'provider_plan' | 'notes' | 'failure'>,
  attempts: AttemptRow[],
  rules: RetryRules,
  records: ReadonlyMap<string, ProviderRecord>,
  sideEffects: ReadonlySet<string>,
): string | undefined {
  if (job.terminal_status !== 'failed' || modeRun(job) !== 'exclusive') return undefined;
  // Its owner's budget ended it, by the figures invariant 12 checks: no provider could help.
  if (job.failure?.code === 'budget-exceeded') return undefined;
  const notes = notesOf(job);
  const skipped = new Set(
    notes.filter((n) => n.event === 'provider_skipped').map((n) => String(n.provider)),
  );
  // Left out of the plan at admission (not certified): noted without a time to wait for.
  const notCertified = new Set(
    notes
      .filter((n) => n.event === 'provider_skipped' && n.until === undefined)
      .map((n) => String(n.provider)),
  );
  const plan = job.provider_plan.filter((name) => !notCertified.has(name));
  const made = attempts.length;
  const forgotten = plan.filter(
    (name) => !attempts.some((a) => a.provider === name) && !skipped.has(name),
  );
  if (forgotten.length > 0 && made < rules.maxAttemptsPerJob)
    return `failed after ${made} of at most ${rules.maxAttemptsPerJob} attempts, and ${forgotten.join(', ')} of its plan was never tried nor noted as passed by`;
  const retryNoted = (attempt: AttemptRow): boolean =>
    notes.some((n) => n.event === 'retry_scheduled' && n.afterAttempt === attempt.id);

  for (const [index, attempt] of attempts.slice(0, -1).entries()) {
    const next = attempts[index + 1]!;
    if (!failedByItsOwnCall(attempt) || attempt.started_at || next.provider === attempt.provider)
      continue;
    if ((records.get(attempt.id)?.requests.length ?? 0) > 0 || retryNoted(attempt)) continue;
    const left = retryLeft(attempts.slice(0, index + 1), plan, rules);
    if (left && !notCertified.has(attempt.provider))
      return `attempt ${attempt.seq} on ${attempt.provider} was never sent (it never began, and ${attempt.provider} received nothing under its key), its try ${left.tries} of ${left.most} in a row there, and attempt ${next.seq} went to ${next.provider} with no retry scheduled`;
  }

  const last = attempts.at(-1);
  if (!last || !failedByItsOwnCall(last) || notCertified.has(last.provider)) return undefined;
  const why = healingFailure(last, records.get(last.id), sideEffects.has(last.provider));
  if (!why) return undefined;
  const left = retryLeft(attempts, plan, rules);
  if (!left || retryNoted(last)) return undefined;
  const code = last.error?.code ?? 'no code';
  return `failed after attempt ${last.seq} on ${last.provider} failed (${code}; ${why}), its try ${left.tries} of ${left.most} in a row there, with ${made} of at most ${rules.maxAttemptsPerJob} attempts made: a retry was left, and none was scheduled`;
}

/** A job as its owner reads it (`GET /v1/jobs/:id`): what it says of itself and its attempts. */
export interface JobAnswer {
  status: string;
  completedBy: string | null;
  attempts: Array<{ id: string; state: string; error?: { code?: string } | null }>;
}

/**
 * Why a charge its provider made is hidden by its job's answer, or undefined when it is not: the
 * charged attempt must be `succeeded` (the job's winner), `lost` (a result that came after the
 * job was settled) or `unknown` (it may have taken effect); `failed` or `cancelled` says no money
 * moved, which only an operator's verdict may say (they looked at the provider's records).
 */
export function hiddenCharge(key: string, answer: JobAnswer): string | undefined {
  const attempt = answer.attempts.find((a) => a.id === key);
  if (!attempt) return `its job's answer (${answer.status}) shows no attempt ${key}`;
  if (attempt.state !== 'failed' && attempt.state !== 'cancelled') return undefined;
  const code = attempt.error?.code ?? 'no code';
  if (attempt.state === 'failed' && code === 'operator') return undefined;
  return `its job answers ${answer.status}${answer.completedBy ? ` (by ${answer.completedBy})` : ''} with attempt ${key} ${attempt.state} (${code}): a charge that happened, hidden`;
}

export interface CheckInputs {
  db: pg.Pool;
  temporal: Client;
  journal: Journal;
  world: World;
  simulatorUrls: string[];
  /** Where the owners read their jobs (invariant 10 reads a charged job's answer there). */
  apiUrl?: string;
  /** Owner → API token. */
  owners?: Record<string, string>;
  /** Names of providers with side effects. */
  paymentProviders: string[];
  /** Those that look a lost answer up by replaying its request (issue 59). */
  replayProviders: string[];
  /** Every provider's call window, by name (see believableAt). */
  callWindows: Record<string, CallWindow>;
  /** The retry settings and the attempt cap the services run with (invariant 9). */
  retryRules: RetryRules;
  /** Side-effect-free attempts the settle step found still unknown past their time. */
  leftToOperators: LeftToOperator[];
  /** Service processes that died without being killed by the campaign. */
  unexpectedExits: Array<{
    service: string;
    code: number | null;
    signal: string | null;
    at: string;
  }>;
}

/**
 * The storms and outages that struck a provider while one of these attempts was on it (its call
 * from start to end, campaign time from `campaignStart`): what a violation of invariant 9 shows.
 */
export function windowsMeeting(
  attempts: AttemptRow[],
  windows: FaultWindow[],
  campaignStart: number,
): FaultWindow[] {
  return windows.filter((window) =>
    attempts.some((attempt) => {
      if (!attempt.started_at || attempt.provider !== window.provider) return false;
      const from = attempt.started_at.getTime() - campaignStart;
      const to = (attempt.call_ended_at ?? attempt.finished_at ?? attempt.started_at).getTime();
      return from <= window.to && to - campaignStart >= window.from;
    }),
  );
}

const describeWindow = (window: FaultWindow): string =>
  `${window.id} on ${window.provider} (${(window.from / 1000).toFixed(1)}–${(window.to / 1000).toFixed(1)} s)`;

/**
 * A try-again on a job whose run the operator nemesis terminated, before a new run took it up:
 * the documented 503 with Retry-After (nothing was done, docs/http-api.md), not a failure.
 */
export function isTryAgainBetweenRuns(
  exchange: Pick<Exchange, 'status' | 'problem' | 'path'>,
  struck: ReadonlySet<string>,
): boolean {
  const jobId = /^\/v1\/jobs\/([^/]+)\/attempts$/.exec(exchange.path)?.[1];
  return (
    exchange.status === 503 &&
    exchange.problem === 'service-unavailable' &&
    jobId !== undefined &&
    struck.has(jobId)
  );
}

/**
 * Invariant 8 over the answers the clients got (requests sent through Temporal are not HTTP
 * answers): outside the window of a process fault or partition, every request was answered
 * (nothing refused, reset, or left unanswered until the client gave up) and none with a `5xx`,
 * but for a try-again on a job between runs; inside one too, every `5xx` is the documented `503`
 * with Retry-After. A client timeout gets no exemption of its own: it left unknown only what the
 * answer would have been, so it is not held to the `503` rule, but a request the service left
 * unanswered for the client's whole wait, with no fault in that time, is the service's failure.
 */
export function answersBreakingInvariant8(
  exchanges: ReadonlyArray<Exchange>,
  windows: ReadonlyArray<{ from: number; to: number }>,
  betweenRuns: ReadonlySet<string>,
): Array<{ message: string; needles: string[] }> {
  const found: Array<{ message: string; needles: string[] }> = [];
  const needlesOf = (exchange: Exchange) => [
    ...(exchange.jobId ? [exchange.jobId] : []),
    ...(exchange.key ? [exchange.key] : []),
  ];
  for (const exchange of exchanges) {
    if (exchange.via === 'temporal') continue;
    if (exchange.status !== 0 && exchange.status < 500) continue;
    if (isTryAgainBetweenRuns(exchange, betweenRuns)) continue;
    const inWindow = windows.some(
      (w) => exchange.at <= w.to && exchange.at + exchange.ms >= w.from,
    );
    if (inWindow) continue;
    const what =
      exchange.status !== 0
        ? String(exchange.status)
        : isClientTimeout(exchange.error)
          ? `nothing within the client's ${(exchange.ms / 1000).toFixed(0)} s (${exchange.error})`
          : `nothing (${exchange.error})`;
    found.push({
      message: `${exchange.method} ${exchange.path} via ${exchange.via} answered ${what} at ${exchange.at} ms, outside any process fault`,
      needles: needlesOf(exchange),
    });
  }
  // Even inside a fault's window, a 5xx is the documented refusal: a 503 with Retry-After (the
  // API's own, or nginx's when no replica answered), which a client may retry.
  for (const exchange of exchanges) {
    if (exchange.via === 'temporal' || exchange.status < 500) continue;
    if (exchange.status === 503 && exchange.retryAfter) continue;
    found.push({
      message: `${exchange.method} ${exchange.path} via ${exchange.via} answered ${exchange.status}${exchange.problem ? ` (${exchange.problem})` : ''}${exchange.status === 503 ? ' without Retry-After' : ''} at ${exchange.at} ms: not the documented 503 with Retry-After`,
      needles: needlesOf(exchange),
    });
  }
  return found;
}

/**
 * Jobs whose workflow start Temporal refused (a create answered `workflow-start-refused`): the
 * job is recorded and its run starts later (a replay, or the sweeper), so until then a
 * try-again is the documented 503 of a job between runs. Known by the create's key, whose job
 * id a later answer names.
 */
export function jobsStartedLate(exchanges: ReadonlyArray<Exchange>): Set<string> {
  const refusedKeys = new Set(
    exchanges
      .filter((e) => e.kind === 'create' && e.problem === 'workflow-start-refused')
      .map((e) => `${e.owner ?? ''}\u0000${e.key ?? ''}`),
  );
  const jobs = new Set<string>();
  for (const e of exchanges)
    if (e.kind === 'create' && e.jobId && refusedKeys.has(`${e.owner ?? ''}\u0000${e.key ?? ''}`))
      jobs.add(e.jobId);
  return jobs;
}

/** Reads everything from the database, the providers' ledgers and Temporal, and checks 1–11. */
/** What the replay provider's lost answers came to (invariant 11), for the report. */
export interface ReplayLooks {
  /** Replays sent (recorded), by what the look made of each. */
  replays: Record<string, number>;
  /** Attempts looked at by replay, by what settled them (ReplaySettledBy). */
  settledBy: Record<string, number>;
}

export async function checkInvariants(inputs: CheckInputs): Promise<{
  violations: Violation[];
  jobsByState: Record<string, number>;
  raceEvents: number;
  workflowsChecked: number;
  replayLooks: ReplayLooks;
}> {
  const { db, world, journal } = inputs;
  const violations: Violation[] = [];
  const violate = (invariant: number, message: string, needles: string[]) =>
    violations.push({ invariant, message, needles });

  const jobs = (await db.query<JobRow>('SELECT * FROM jobs')).rows;
  const attempts = (await db.query<AttemptRow>('SELECT * FROM attempts ORDER BY job_id, seq')).rows;
  const races = (
    await db.query<{
      job_id: string;
      losing_attempt_id: string;
      winning_attempt_id: string | null;
    }>('SELECT job_id, losing_attempt_id, winning_attempt_id FROM race_events')
  ).rows;
  const attemptsOf = new Map<string, AttemptRow[]>();
  for (const attempt of attempts) {
    const list = attemptsOf.get(attempt.job_id) ?? [];
    list.push(attempt);
    attemptsOf.set(attempt.job_id, list);
  }
  const jobsByState: Record<string, number> = {};

  // 1. One live job per (owner, key), generations one after another; the answers named them.
  const byKey = new Map<string, JobRow[]>();
  for (const job of jobs) {
    const id = `${job.owner_id}\u0000${job.idempotency_key}`;
    byKey.set(id, [...(byKey.get(id) ?? []), job]);
    const state =
      job.terminal_status ??
      ((attemptsOf.get(job.id) ?? []).some((a) => a.state === 'unknown') ? 'unknown' : 'open');
    jobsByState[state] = (jobsByState[state] ?? 0) + 1;
  }
  for (const [id, rows] of byKey) {
    rows.sort((a, b) => a.key_generation - b.key_generation);
    const live = rows.filter((row) => row.key_release === null);
    const contiguous = rows.every((row, index) => row.key_generation === index + 1);
    // The latest generation may be released too, until a create makes the next one.
    if (live.length > 1 || !contiguous || rows.slice(0, -1).some((row) => !row.key_release))
      violate(
        1,
        `${rows.length} jobs for one (owner, key) with ${live.length} unreleased (generations ${rows.map((r) => r.key_generation).join(', ')}): ${rows.map((r) => r.id).join(', ')}`,
        [id.split('\u0000')[1]!, ...rows.map((r) => r.id)],
      );
  }
  const notFoundReads = new Map<string, Exchange[]>();
  for (const exchange of journal.exchanges) {
    const jobId = exchange.status === 404 ? JOB_READ.exec(exchange.path)?.[1] : undefined;
    if (jobId) notFoundReads.set(jobId, [...(notFoundReads.get(jobId) ?? []), exchange]);
  }
  for (const record of world.records()) {
    const rows = byKey.get(`${record.owner}\u0000${record.key}`) ?? [];
    const allowed = 1 + record.releases.length;
    if (record.jobIds.size > allowed || record.workflowIds.size > allowed)
      violate(
        1,
        `answers for key ${record.key} named ${record.jobIds.size} jobs and ${record.workflowIds.size} workflow ids after ${record.releases.length} releases`,
        [record.key],
      );
    for (const named of record.jobIds)
      if (!rows.some((row) => row.id === named))
        violate(
          1,
          `key ${record.key} was answered with job ${named}, which the database does not hold for it`,
          [record.key],
        );
    // A job once named to its owner exists for them: a read that says otherwise (a database
    // out of reach taken for "no such job") would make a client start the work again.
    for (const named of record.jobIds)
      for (const exchange of notFoundReads.get(named) ?? [])
        if (exchange.owner === record.owner)
          violate(
            1,
            `job ${named} of ${record.owner} was answered 404 to its owner (${exchange.method} ${exchange.path} via ${exchange.via} at ${exchange.at} ms)`,
            [named, record.key],
          );
    for (const workflowId of record.workflowIds)
      if (!rows.some((row) => row.workflow_id === workflowId))
        violate(
          1,
          `key ${record.key} was reported running as ${workflowId}, which none of its jobs runs as`,
          [record.key],
        );
    // 7. Every job under a key holds the intent first sent with it, whatever 409s came since
    //    (a released key is sent only its own intent again).
    for (const row of rows)
      if (canonicalJson(row.input) !== canonicalJson(record.intent.input))
        violate(7, `job ${row.id}'s input is not the intent its key was first sent with`, [
          row.id,
          record.key,
        ]);
    // 8. A request retried with its key ended in exactly one job (one per generation its
    //    releases allowed: a retry sent after a release makes the next one).
    if (record.retried && (rows.length > allowed || rows.length !== record.jobIds.size))
      violate(
        8,
        `key ${record.key} was retried and ended in ${rows.length} jobs (${record.jobIds.size} named, ${record.releases.length} releases)`,
        [record.key],
      );
  }

  // 2. At most one winner; a recorded result never changes.
  const jobById = new Map(jobs.map((job) => [job.id, job]));
  for (const job of jobs) {
    const winners = (attemptsOf.get(job.id) ?? []).filter((a) => a.state === 'succeeded');
    if (winners.length > 1)
      violate(
        2,
        `job ${job.id} has ${winners.length} succeeded attempts: ${winners.map((w) => w.id).join(', ')}`,
        [job.id],
      );
    if (job.terminal_status === 'succeeded' && winners[0] && winners[0].id !== job.completed_by)
      violate(
        2,
        `job ${job.id} was completed by ${job.completed_by} but ${winners[0].id} succeeded`,
        [job.id],
      );
  }
  for (const snapshot of world.snapshots.values()) {
    const job = jobById.get(snapshot.jobId);
    if (!job) continue;
    if (
      job.terminal_status !== snapshot.status ||
      job.completed_by !== snapshot.completedBy ||
      canonicalJson(job.result ?? null) !== snapshot.result
    )
      violate(
        2,
        `job ${job.id}'s outcome changed after it was seen ${snapshot.status} (by ${snapshot.completedBy}; now ${job.terminal_status} by ${job.completed_by})`,
        [job.id],
      );
  }
  for (const sighting of world.sightings)
    violate(sighting.invariant, `seen while running: ${sighting.message}`, sighting.needles);

  // 3. Late results are races, and no race is the result.
  const lostWithRace = new Set(races.map((race) => race.losing_attempt_id));
  for (const attempt of attempts) {
    if (attempt.state === 'lost' && !lostWithRace.has(attempt.id))
      violate(3, `attempt ${attempt.id} lost but no race event records it`, [attempt.id]);
  }
  for (const race of races) {
    const job = jobById.get(race.job_id);
    if (job?.completed_by === race.losing_attempt_id)
      violate(
        3,
        `job ${race.job_id}'s result came from ${race.losing_attempt_id}, a logged loser`,
        [race.job_id],
      );
  }

  // 4. Charges: at most one per job across both payment providers' ledgers, one request per
  //    provider key, and none under a generation released as uncharged.
  const ledgers: LedgerEntryView[] = [];
  const requestLogs: LoggedRequest[][] = [];
  for (const url of inputs.simulatorUrls) {
    ledgers.push(...(await ledgerOf(url)));
    requestLogs.push(await requestsOf(url));
  }
  const chargesOfJob = chargesByJob(ledgers);
  const replays = (
    await db.query<ReplayRow>(
      `SELECT r.attempt_id, r.began_at, s.replay_until, r.verdict
         FROM attempt_replays r JOIN attempt_sends s USING (attempt_id) ORDER BY r.id`,
    )
  ).rows;
  const replaysOf = new Map<string, ReplayRow[]>();
  for (const replay of replays)
    replaysOf.set(replay.attempt_id, [...(replaysOf.get(replay.attempt_id) ?? []), replay]);
  const replayCounts = new Map([...replaysOf].map(([key, rows]) => [key, rows.length]));
  // One attempt, one request: a second request under its key is a resend nobody recorded. A
  // payment provider absorbs it (one execution per key) and a chat API does the work again, so
  // it is counted in the request log, which also holds requests under keys never executed
  // (refused, dropped, hung).
  for (const log of requestLogs)
    for (const [key, times] of providerKeysSentTwice(log, replayCounts))
      violate(
        4,
        `provider key ${key} received ${times} requests${replayCounts.has(key) ? `, of which ${replayCounts.get(key)} were recorded replays` : ''}`,
        [key.split(':')[0]!],
      );
  for (const job of jobs) {
    if (job.job_type !== 'charge') continue;
    const charges = chargesOfJob.get(job.id) ?? [];
    if (charges.length > 1)
      violate(4, `job ${job.id} was charged ${charges.length} times: ${charges.join(', ')}`, [
        job.id,
      ]);
    if (
      job.terminal_status === 'succeeded' &&
      (charges.length !== 1 || charges[0] !== job.completed_by)
    )
      violate(
        4,
        `job ${job.id} succeeded by ${job.completed_by} but the ledgers show charges [${charges.join(', ')}]`,
        [job.id],
      );
    if (!job.key_release) continue;
    // A release is the operator's word that this generation is done with: everything it did is
    // known by then. Nothing of it may take effect later, and one released with no charge
    // recorded must never be charged, or the next generation charges the intent twice.
    const releasedAt = Date.parse(job.key_release.at);
    const jobAttempts = attemptsOf.get(job.id) ?? [];
    for (const attempt of jobAttempts) {
      const window = inputs.callWindows[attempt.provider]?.lateResultMs ?? 0;
      const settledAt = attempt.finished_at?.getTime() ?? Infinity;
      const callOverAt = attempt.started_at
        ? (attempt.call_ended_at?.getTime() ?? attempt.started_at.getTime() + window)
        : -Infinity;
      // A millisecond of slack: both times are PostgreSQL's, read at different precisions.
      if (settledAt > releasedAt + 1 || callOverAt > releasedAt + 1)
        violate(
          4,
          `job ${job.id}'s key was released while attempt ${attempt.id} could still take effect (${attempt.state})`,
          [job.id, attempt.id],
        );
    }
    const chargedByRelease = jobAttempts.some(
      (a) =>
        (a.state === 'succeeded' || a.state === 'lost') &&
        (a.finished_at?.getTime() ?? Infinity) <= releasedAt,
    );
    if (!chargedByRelease && charges.length > 0) {
      const later = jobs
        .filter(
          (other) =>
            other.owner_id === job.owner_id &&
            other.idempotency_key === job.idempotency_key &&
            other.key_generation > job.key_generation,
        )
        .flatMap((other) => chargesOfJob.get(other.id) ?? []);
      violate(
        4,
        `generation ${job.key_generation} of key ${job.idempotency_key} (job ${job.id}) was released with no charge recorded, and was charged under ${charges.join(', ')}${later.length > 0 ? `: the intent was charged again by a later generation under ${later.join(', ')}` : ''}`,
        [job.id, job.idempotency_key],
      );
    }
  }

  // 5. No clock turns an unknown attempt into a failure.
  const charged = new Set(
    ledgers.filter((e) => e.route === 'charge' && e.executions > 0).map((e) => e.idempotencyKey),
  );
  for (const attempt of attempts) {
    if (attempt.state !== 'failed') continue;
    const code = attempt.error?.code ?? '';
    const sideEffects = inputs.paymentProviders.includes(attempt.provider);
    const wasUnknown = world.seenUnknown.has(attempt.id);
    const settledByEvidence = SETTLED_BY.has(code);
    const definite = attempt.error?.certainty === 'definite';
    const callEnded = attempt.error?.settledBecause !== undefined && attempt.call_ended_at !== null;
    let reason: string | undefined;
    if (sideEffects && !definite && !settledByEvidence)
      reason = `failed (${code}) although its charge may have happened and nothing settled it${charged.has(attempt.id) ? "; the provider's ledger shows the charge" : ''}`;
    else if (
      wasUnknown &&
      !settledByEvidence &&
      !(
        !sideEffects &&
        (callEnded || (code === 'call_gone' && settledAfterCallOver(attempt, inputs.callWindows)))
      )
    )
      reason = `was unknown and then failed (${code}) without a lookup, callback or operator`;
    else if (code === 'never_processed' && !settledAfterCallOver(attempt, inputs.callWindows))
      reason = 'failed as never processed before its call had ended';
    else if ((code === 'never_sent' || code === 'orphaned') && attempt.started_at)
      reason = `failed as ${code} although its call had started`;
    if (reason) violate(5, `attempt ${attempt.id} ${reason}`, [attempt.id]);
  }

  // 6. Terminal or waiting on an operator; rows and workflows agree. Only an attempt that may
  //    have had an effect waits on an operator: the service settles a side-effect-free one
  //    itself once its call is over.
  let workflowsChecked = 0;
  for (const left of inputs.leftToOperators)
    violate(
      6,
      `job ${left.jobId} waited on an operator: attempt ${left.id} on ${left.provider} (no side effects) was still unknown at least ${(left.pastBelievableMs / 1000).toFixed(1)} s after its call could no longer answer`,
      [left.jobId, left.id],
    );
  for (const job of jobs) {
    const unknown = (attemptsOf.get(job.id) ?? []).filter((a) => a.state === 'unknown');
    const waitingOnOperator = unknown.some((a) => inputs.paymentProviders.includes(a.provider));
    if (!job.terminal_status && !waitingOnOperator)
      violate(6, `job ${job.id} is neither terminal nor waiting on an operator`, [job.id]);
    if (job.terminal_status && unknown.length > 0)
      violate(
        6,
        `job ${job.id} is ${job.terminal_status} with an attempt still unknown after operators settled what they could`,
        [job.id],
      );
    const status = await workflowStatus(inputs.temporal, job.workflow_id);
    workflowsChecked += 1;
    if (job.terminal_status && isOpenRunStatus(status))
      violate(6, `job ${job.id} is ${job.terminal_status} but its workflow still runs`, [job.id]);
    if (!job.terminal_status && status !== 'RUNNING')
      violate(6, `job ${job.id} is open but its workflow is ${status}`, [job.id]);
  }

  // 8. Answers: none missing and no 5xx outside the windows of process faults, and every 5xx
  //    the documented refusal.
  const windows = journal.processFaults.map((fault) => ({
    from: fault.at,
    to: (fault.backAt ?? journal.now()) + FAULT_GRACE_MS,
  }));
  const betweenRuns = new Set([...world.nemesisStruck, ...jobsStartedLate(journal.exchanges)]);
  for (const { message, needles } of answersBreakingInvariant8(
    journal.exchanges,
    windows,
    betweenRuns,
  ))
    violate(8, message, needles);

  // 8. Nothing crashed on its own.
  for (const exit of inputs.unexpectedExits)
    violate(
      8,
      `${exit.service} exited on its own (code ${exit.code}, signal ${exit.signal}) at ${exit.at}`,
      [],
    );

  // 9. A job fails only when no retry and no healthy fallback was left, by what its providers
  //    received and answered.
  const records = providerRecords(ledgers, requestLogs.flat());
  const sideEffects = new Set(inputs.paymentProviders);
  for (const job of jobs) {
    const jobAttempts = attemptsOf.get(job.id) ?? [];
    const why = failedWithHelpLeft(job, jobAttempts, inputs.retryRules, records, sideEffects);
    if (!why) continue;
    const met = windowsMeeting(jobAttempts, journal.faultWindows, journal.started);
    violate(
      9,
      `job ${job.id} ${why}${met.length > 0 ? `; storms and outages it met: ${met.map(describeWindow).join(', ')}` : ''}`,
      [job.id, ...met.map((window) => window.id)],
    );
  }

  // 10. A charge that happened is never hidden: every key a payment provider charged, once, is
  //     an attempt its job's answer (to its owner, through the API) shows succeeded, lost or
  //     unknown; and nothing reached any provider under an attempt that never began.
  const attemptById = new Map(attempts.map((attempt) => [attempt.id, attempt]));
  const answers = new Map<string, JobAnswer | undefined>();
  for (const entry of ledgers) {
    if (entry.route !== 'charge' || entry.executions === 0) continue;
    const key = entry.idempotencyKey;
    const jobId = key.split(':')[0]!;
    if (entry.executions > 1)
      violate(10, `provider key ${key} was charged ${entry.executions} times by its provider`, [
        jobId,
      ]);
    const job = jobById.get(jobId);
    if (!job || !attemptById.has(key)) {
      violate(10, `a provider charged under key ${key}, which is no attempt of ours`, [jobId]);
      continue;
    }
    if (!answers.has(jobId)) answers.set(jobId, await ownersAnswer(inputs, job));
    const read = answers.get(jobId);
    const answer: JobAnswer = read ?? {
      status: job.terminal_status ?? 'open',
      completedBy: job.completed_by,
      attempts: (attemptsOf.get(jobId) ?? []).map((a) => ({
        id: a.id,
        state: a.state,
        error: a.error,
      })),
    };
    const hidden = hiddenCharge(key, answer);
    if (hidden)
      violate(
        10,
        `attempt ${key} on ${attemptById.get(key)!.provider} was charged (its provider's ledger holds the key), but ${hidden}${read ? '' : ' (read from the rows: the API did not answer)'}`,
        [jobId, key],
      );
  }
  for (const [key, record] of records) {
    const attempt = attemptById.get(key);
    if (!attempt || attempt.started_at || record.requests.length === 0) continue;
    violate(
      10,
      `attempt ${key} on ${attempt.provider} never began (${attempt.state}${attempt.error?.code ? `, ${attempt.error.code}` : ''}), yet its provider received ${record.requests.length} request(s) under its key`,
      [attempt.job_id, key],
    );
  }

  // 11. Replays only inside their key window; a lost answer settled by replay, not by a person.
  for (const replay of replaysPastTheirWindow(replays))
    violate(
      11,
      `a replay of attempt ${replay.attempt_id} began at ${replay.began_at.toISOString()}, at or after its window's end (${replay.replay_until.toISOString()})`,
      [replay.attempt_id.split(':')[0]!, replay.attempt_id],
    );
  const replayLooks: ReplayLooks = { replays: {}, settledBy: {} };
  for (const replay of replays) {
    const verdict = replay.verdict ?? 'unanswered';
    replayLooks.replays[verdict] = (replayLooks.replays[verdict] ?? 0) + 1;
  }
  for (const attempt of attempts) {
    if (!inputs.replayProviders.includes(attempt.provider)) continue;
    const job = jobById.get(attempt.job_id);
    if (!job) continue;
    const { by, violation } = replaySettlement({
      attempt,
      replays: replaysOf.get(attempt.id) ?? [],
      record: records.get(attempt.id),
      job,
      operator: world.operatorSettled.get(attempt.id),
    });
    if (by !== 'not_replayed') replayLooks.settledBy[by] = (replayLooks.settledBy[by] ?? 0) + 1;
    if (violation) violate(11, violation, [attempt.job_id, attempt.id]);
  }

  return { violations, jobsByState, raceEvents: races.length, workflowsChecked, replayLooks };
}

/**
 * The job as its owner reads it now (`GET /v1/jobs/:id`, with its attempts), or undefined when
 * the API is not given or did not answer 200.
 */
async function ownersAnswer(inputs: CheckInputs, job: JobRow): Promise<JobAnswer | undefined> {
  const token = inputs.owners?.[job.owner_id];
  if (!inputs.apiUrl || !token) return undefined;
  for (let tries = 0; tries < 3; tries++) {
    try {
      const response = await fetch(`${inputs.apiUrl}/v1/jobs/${job.id}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (response.status === 200) {
        const body = (await response.json()) as Partial<JobAnswer>;
        if (typeof body.status === 'string' && Array.isArray(body.attempts))
          return {
            status: body.status,
            completedBy: body.completedBy ?? null,
            attempts: body.attempts,
          };
      } else await response.body?.cancel();
    } catch {
      // No answer: try again, then read the rows.
    }
  }
  return undefined;
}

/** The client gave up waiting (AbortSignal.timeout), as opposed to a refused or reset connection. */
export function isClientTimeout(error: string | undefined): boolean {
  return /aborted due to timeout/i.test(error ?? '');
}

/** The status of the latest run of a workflow id (continue-as-new keeps the id). */
export async function workflowStatus(temporal: Client, workflowId: string): Promise<string> {
  try {
    const description = await temporal.workflow.getHandle(workflowId).describe();
    return description.status.name;
  } catch (error) {
    return `unreadable (${(error as Error).message})`;
  }
}
