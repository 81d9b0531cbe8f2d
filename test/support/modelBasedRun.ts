import fc from 'fast-check';
import { signCallback } from '../../src/api/signatures';
import type { AttemptState } from '../../src/domain/job';
import type { Fault } from '../../tools/simulator/faults';
import { CALLBACK_SECRET, OPERATOR_TOKEN } from './identities';
import type { JobView } from './jobs';
import {
  expectedProviderView,
  expectedRows,
  providerDifference,
  providerView,
  rowsView,
} from './modelRecords';
import {
  FATES,
  MODEL_PROVIDERS,
  cancel,
  canBecome,
  create,
  describeModel,
  duplicate,
  heldAttempts,
  initialModel,
  killWorker,
  mismatch,
  picture,
  respond,
  settle,
  settledAttempts,
  tryAgain,
  unknownAttempts,
  type Answer,
  type Fate,
  type Intent,
  type JobPicture,
  type ModelState,
  type Prediction,
  type ProviderName,
  type Started,
  type TryAgainTarget,
} from './protocolModel';
import { chatProvider, payProvider } from './providers';
import type { TestStack, TestStackOptions } from './stack';

/**
 * The model-based test's commands, run against the real system (API and worker processes,
 * Temporal, PostgreSQL, the provider simulator), each checked against the reference model in
 * protocolModel.ts. Shared by test/modelBased.test.ts and test/modelBasedPlantedBugs.test.ts.
 */

const PAY_T_CALLBACK_SECRET = 'test-pay-t-callback-secret';

/** The stack the model describes: its four providers, all certified, and quick looks. */
export const MODEL_STACK: TestStackOptions = {
  workerProcess: true,
  providers: (url) => [
    payProvider(url, 'pay', {
      timeoutMs: 120_000,
      lateResultTimeoutMs: 300_000,
      notFoundGraceMs: 0,
      callbackSecretEnv: 'ONEJOB_SIMULATOR_CALLBACK_SECRET',
    }),
    payProvider(url, 'pay-t', {
      timeoutMs: 1_000,
      lateResultTimeoutMs: 300_000,
      notFoundGraceMs: 0,
      // Each provider's callback secret is its own (refused at start otherwise).
      callbackSecretEnv: 'TEST_PAY_T_CALLBACK_SECRET',
    }),
    chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 120_000, lateResultTimeoutMs: 300_000 }),
    chatProvider(url, 'chat-t', 'sim-backup', { timeoutMs: 1_000, lateResultTimeoutMs: 300_000 }),
  ],
  // Hedges start only when a call ends or a user asks: never by a clock during a run.
  hedgeDelayMs: 600_000,
  env: {
    ONEJOB_RECONCILE_FIRST_DELAY_MS: '200',
    ONEJOB_RECONCILE_MAX_DELAY_MS: '1000',
    TEST_PAY_T_CALLBACK_SECRET: PAY_T_CALLBACK_SECRET,
  },
};

/** The callback secret of each provider that takes callbacks. */
const CALLBACK_SECRETS: Record<string, string> = {
  pay: CALLBACK_SECRET,
  'pay-t': PAY_T_CALLBACK_SECRET,
};

export const MODEL_CERTIFICATIONS: Array<[string, string]> = [
  ['pay', 'charge'],
  ['pay-t', 'charge'],
  ['chat', 'summarize'],
  ['chat-t', 'summarize'],
];

const TEXT = 'One job per intent. Attempts live under it. A timeout is unknown, never failed.';

/** What one run has done on the real system. */
export interface RealRun {
  stack: TestStack;
  /** Unique per run: its key, its charge account and its gate names. */
  runId: string;
  key: string;
  body: Record<string, unknown> | null;
  jobId: string | null;
  /** Every gate this run queued (opened at the end, so nothing stays held). */
  gates: string[];
  /** What happened, step by step, for a failure report. */
  log: string[];
}

export interface ModelBox {
  state: ModelState;
}

// ---------------------------------------------------------------------------------------------
// Talking to the real system

function bodyOf(intent: Intent, runId: string, variant = 0): Record<string, unknown> {
  if (intent.kind === 'charge')
    return {
      type: 'charge',
      input: { amountCents: 1250 + variant, currency: 'EUR', account: `acct-${runId}` },
      providers: intent.plan,
    };
  return {
    type: 'summarize',
    input: { text: variant === 0 ? TEXT : `${TEXT} (${variant})` },
    providers: intent.plan,
    mode: intent.mode,
  };
}

const FATE_FAULTS: Record<Fate, Fault | undefined> = {
  answers: undefined,
  refuses: { kind: 'fail_before', status: 400 },
  'fails-after-work': { kind: 'fail_after', status: 500 },
  'drops-after-work': { kind: 'drop_after' },
  'drops-before-work': { kind: 'drop_before' },
};

/**
 * Queues, for each attempt the step will start, a rule that holds its request at a gate of its
 * own and then does what its fate says. Before the job id is known (the first step) the rule
 * matches by route and model; the run's attempts reach the provider in the order the model
 * starts them, and no other run's job has a call left to make.
 */
function queueFaults(real: RealRun, started: Started[]): void {
  for (const attempt of started) {
    const traits = MODEL_PROVIDERS[attempt.provider];
    const gate = `${real.runId}:${attempt.seq}`;
    const then = FATE_FAULTS[attempt.fate];
    real.stack.simulator.inject({
      route: traits.route,
      ...(traits.model ? { model: traits.model } : {}),
      ...(real.jobId ? { keyPrefix: `${real.jobId}:${attempt.seq}` } : {}),
      fault: { kind: 'hold', gate, ...(then ? { then } : {}) },
    });
    real.gates.push(gate);
  }
}

// ---------------------------------------------------------------------------------------------
// How a run fails

/** What the real system did that the model says it never may. */
export type DivergenceKind =
  /** An HTTP answer (status, problem type, or the state a settle answered) the model forbids. */
  | 'answer'
  /** A duplicate create answered with another job, or without saying it was a replay. */
  | 'replay'
  /** An attempt the model does not have (one more than it started). */
  | 'extra-attempt'
  /** An attempt ran on another provider than the model's. */
  | 'provider'
  /** An attempt is in a state that can never become the model's (states only move forward). */
  | 'attempt-state'
  /** The job ended otherwise than the model says (a terminal status never changes). */
  | 'job-ended'
  /** Another attempt won than the model's. */
  | 'winner'
  /**
   * The provider saw or did otherwise than the model says, whatever the API showed: a call sent
   * twice, work done twice or under a key the model does not have (a double charge), or work
   * done for a request the model has refused or still held.
   */
  | 'provider-records'
  /** The database's rows of the job are not the model's picture, whatever the API showed. */
  | 'rows';

/** A divergence, with both pictures of the job when it is about the job. */
export interface Divergence {
  kind: DivergenceKind;
  /** The attempt it is about, with its state or status as seen and as the model has it. */
  seq?: number;
  seen?: string;
  expected?: string;
  real?: JobPicture;
  model?: JobPicture;
}

/**
 * Why a run failed: `divergence`, the system did what the model forbids (a finding);
 * `ceiling`, it did not reach the model's picture in time (nothing it showed was wrong yet);
 * `infrastructure`, anything else (a request that failed, a process that did not start).
 */
export type RunFailureKind = 'divergence' | 'ceiling' | 'infrastructure';

export class RunFailure extends Error {
  constructor(
    readonly kind: RunFailureKind,
    message: string,
    readonly divergence?: Divergence,
  ) {
    super(message);
    this.name = `RunFailure(${kind})`;
  }
}

function diverged(divergence: Divergence, message: string): RunFailure {
  return new RunFailure('divergence', message, divergence);
}

/** Fails unless the answer is one the model allows. */
function expectAnswer(
  what: string,
  allowed: Answer,
  status: number,
  problem: string | undefined,
): void {
  if (status !== allowed.status)
    throw diverged(
      { kind: 'answer', seen: String(status), expected: String(allowed.status) },
      `${what}: HTTP ${status} (${problem ?? 'no problem'}), model says ${allowed.status}`,
    );
  if (allowed.problems && !allowed.problems.includes(problem ?? ''))
    throw diverged(
      { kind: 'answer', seen: problem, expected: allowed.problems.join(' | ') },
      `${what}: problem ${problem}, model allows ${allowed.problems.join(' | ')}`,
    );
}

const seqOf = (attemptId: string | null): number | null =>
  attemptId === null ? null : Number(attemptId.slice(attemptId.lastIndexOf(':') + 1));

function observed(job: JobView): JobPicture {
  return {
    status: job.status as JobPicture['status'],
    completedBy: seqOf(job.completedBy),
    attempts: job.attempts.map((a) => ({
      seq: a.seq,
      provider: a.provider as ProviderName,
      state: a.state as AttemptState,
    })),
  };
}

const TERMINAL = ['succeeded', 'failed', 'cancelled'];

/**
 * Why `seen` can never become `expected` (states only move forward), or nothing. Attempts
 * first, in order: an attempt settled wrongly is the cause, a job ended or a fallback started
 * because of it the consequence.
 */
function divergence(
  seen: JobPicture,
  expected: JobPicture,
): { divergence: Divergence; message: string } | undefined {
  const found = (d: Omit<Divergence, 'real' | 'model'>, message: string) => ({
    divergence: { ...d, real: seen, model: expected },
    message,
  });
  for (const attempt of [...seen.attempts].sort((a, b) => a.seq - b.seq)) {
    const want = expected.attempts.find((a) => a.seq === attempt.seq);
    const { seq, state } = attempt;
    if (!want)
      return found(
        { kind: 'extra-attempt', seq, seen: state },
        `attempt ${seq} should not exist: the model has ${expected.attempts.length}`,
      );
    if (want.provider !== attempt.provider)
      return found(
        { kind: 'provider', seq, seen: attempt.provider, expected: want.provider },
        `attempt ${seq} ran on ${attempt.provider}, the model says ${want.provider}`,
      );
    if (!canBecome(state, want.state))
      return found(
        { kind: 'attempt-state', seq, seen: state, expected: want.state },
        `attempt ${seq} is ${state}, the model says ${want.state}`,
      );
  }
  if (TERMINAL.includes(seen.status) && seen.status !== expected.status)
    return found(
      { kind: 'job-ended', seen: seen.status, expected: expected.status },
      `the job ended ${seen.status}, the model says ${expected.status}`,
    );
  if (seen.completedBy !== null && seen.completedBy !== expected.completedBy)
    return found(
      {
        kind: 'winner',
        seq: seen.completedBy,
        seen: String(seen.completedBy),
        expected: String(expected.completedBy ?? 'none'),
      },
      `attempt ${seen.completedBy} won, the model says ${expected.completedBy ?? 'none'}`,
    );
  return undefined;
}

const same = (a: JobPicture, b: JobPicture): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Longest wait for the real system to reach the model's picture (a ceiling, not a timing). */
const SETTLE_CEILING_MS = 45_000;

async function readJob(real: RealRun): Promise<JobView> {
  const response = await real.stack.request('GET', `/v1/jobs/${real.jobId}`);
  if (response.status !== 200) throw new Error(`GET job: HTTP ${response.status}`);
  return (await response.json()) as JobView;
}

/**
 * Polls the job until it shows the model's picture and every request the model holds has
 * reached the simulator; fails at once when it shows something that can never become the
 * picture, and at the ceiling otherwise.
 */
async function untilSettled(real: RealRun, model: ModelState): Promise<JobView> {
  const expected = picture(model.job!);
  const held = heldAttempts(model).map((a) => `${real.jobId}:${a.seq}`);
  const deadline = Date.now() + SETTLE_CEILING_MS;
  for (;;) {
    const job = await readJob(real);
    const seen = observed(job);
    const wrong = divergence(seen, expected);
    if (wrong)
      throw diverged(
        wrong.divergence,
        `${wrong.message}\n  real:  ${JSON.stringify(seen)}\n  model: ${JSON.stringify(expected)}`,
      );
    if (same(seen, expected)) {
      const arrived = new Set(real.stack.simulator.requests().map((r) => r.idempotencyKey));
      if (held.every((id) => arrived.has(id))) return job;
    }
    if (Date.now() > deadline)
      throw new RunFailure(
        'ceiling',
        `the job did not reach the model's picture within ${SETTLE_CEILING_MS} ms\n  real:  ${JSON.stringify(seen)}\n  model: ${JSON.stringify(expected)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How many steps of each kind ran (over every run of the file), for the test to report. */
export const stepCounts = new Map<string, number>();

/**
 * A step as the model sees it before it runs: its name for the log, its kind (the command and
 * the answer the model predicts, or what the provider does) and the prediction.
 */
export interface PlannedStep {
  name: string;
  kind: string;
  prediction: Prediction;
}

function planned(name: string, kind: string, prediction: Prediction): PlannedStep {
  const status = prediction.answer.status;
  return { name, kind: status ? `${kind} ${status}` : kind, prediction };
}

/** Applies a planned step: queue its faults, act, check the answer, adopt the state, settle. */
async function step(
  model: ModelBox,
  real: RealRun,
  { name, kind, prediction }: PlannedStep,
  act: () => Promise<{ status: number; problem?: string; body?: Record<string, unknown> }>,
): Promise<void> {
  real.log.push(`${name}  [before: ${describeModel(model.state)}]`);
  queueFaults(real, prediction.started);
  const answer = await act();
  expectAnswer(name, prediction.answer, answer.status, answer.problem);
  stepCounts.set(kind, (stepCounts.get(kind) ?? 0) + 1);
  const states = prediction.answer.states;
  if (states && !states.includes(answer.body?.state as AttemptState))
    throw diverged(
      { kind: 'answer', seen: String(answer.body?.state), expected: states.join(' | ') },
      `${name}: settled as ${String(answer.body?.state)}, model says ${states.join(' | ')}`,
    );
  model.state = prediction.next;
  await untilSettled(real, model.state);
  await recordsMatch(real, model.state);
}

/** Longest wait for work the model says a let-go request did to reach the ledger. */
const LEDGER_CEILING_MS = 5_000;

/**
 * Once the API shows the model's picture, the two records it is not: what the provider saw and
 * did under the job's keys (its request log and ledger, read until the work the model says was
 * done is there, then compared whole), and the job's rows. Either differing is a divergence.
 */
async function recordsMatch(real: RealRun, model: ModelState): Promise<void> {
  const jobId = real.jobId!;
  const job = model.job!;
  const expected = expectedProviderView(jobId, job);
  const owed = (seen: ReturnType<typeof providerView>) =>
    Object.entries(expected).some(([key, e]) => (seen[key]?.executions ?? 0) < e.executions);
  const deadline = Date.now() + LEDGER_CEILING_MS;
  let seen = providerView(jobId, real.stack.simulator.requests(), real.stack.simulator.ledger());
  while (owed(seen) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen = providerView(jobId, real.stack.simulator.requests(), real.stack.simulator.ledger());
  }
  const differs = providerDifference(seen, expected);
  if (differs)
    throw diverged(
      { kind: 'provider-records', seen: JSON.stringify(seen), expected: JSON.stringify(expected) },
      `the provider's records differ from the model: ${differs}`,
    );
  const rows = await rowsView(real.stack.pool, jobId);
  const want = expectedRows(jobId, job);
  if (JSON.stringify(rows) !== JSON.stringify(want))
    throw diverged(
      { kind: 'rows', seen: JSON.stringify(rows), expected: JSON.stringify(want) },
      `the job's rows differ from the model\n  rows:  ${JSON.stringify(rows)}\n  model: ${JSON.stringify(want)}`,
    );
}

async function send(
  real: RealRun,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; token?: string } = {},
): Promise<{
  status: number;
  problem?: string;
  body?: Record<string, unknown>;
  response: Response;
}> {
  const response = await real.stack.request(method, path, options);
  const text = await response.text();
  let body: Record<string, unknown> | undefined;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  const problem =
    typeof body?.type === 'string' ? body.type.replace(/^\/problems\//, '') : undefined;
  return { status: response.status, problem, body, response };
}

// ---------------------------------------------------------------------------------------------
// The commands

/** A command of the model-based test: it can say, from the model alone, what it will do. */
export interface Command extends fc.AsyncCommand<ModelBox, RealRun> {
  plan(state: ModelState): PlannedStep;
}

export class CreateCommand implements Command {
  constructor(
    readonly intent: Intent,
    readonly fates: Fate[],
  ) {}
  check = (m: Readonly<ModelBox>): boolean => m.state.job === null;
  plan = (state: ModelState): PlannedStep =>
    planned(this.toString(), 'create', create(state, this.intent, this.fates));
  async run(m: ModelBox, r: RealRun): Promise<void> {
    const body = bodyOf(this.intent, r.runId);
    await step(m, r, this.plan(m.state), async () => {
      const answer = await send(r, 'POST', '/v1/jobs', {
        headers: { 'idempotency-key': r.key },
        body,
      });
      r.body = body;
      r.jobId = typeof answer.body?.id === 'string' ? answer.body.id : null;
      return answer;
    });
  }
  toString = (): string =>
    `create(${this.intent.kind}, ${this.intent.mode}, [${this.intent.plan.join(',')}], fates=[${this.fates.join(',')}])`;
}

export class DuplicateCommand implements Command {
  check = (m: Readonly<ModelBox>): boolean => m.state.job !== null;
  plan = (state: ModelState): PlannedStep =>
    planned(this.toString(), 'duplicate create', duplicate(state));
  async run(m: ModelBox, r: RealRun): Promise<void> {
    const duplicateStep = this.plan(m.state);
    const { prediction } = duplicateStep;
    await step(m, r, duplicateStep, async () => {
      // The same intent written otherwise: keys in another order, other whitespace.
      const reordered = JSON.stringify(
        Object.fromEntries(Object.entries(r.body!).reverse()),
        null,
        1,
      );
      const answer = await send(r, 'POST', '/v1/jobs', {
        headers: { 'idempotency-key': r.key, 'content-type': 'application/json' },
        body: reordered,
      });
      if (answer.status === 200) {
        if (answer.body?.id !== r.jobId)
          throw diverged(
            { kind: 'replay', seen: String(answer.body?.id), expected: r.jobId ?? undefined },
            `duplicate: job ${String(answer.body?.id)}, not ${r.jobId}`,
          );
        if (answer.response.headers.get('idempotent-replayed') !== 'true')
          throw diverged({ kind: 'replay' }, 'duplicate: no Idempotent-Replayed: true');
        const status = picture(prediction.next.job!).status;
        if (answer.body?.status !== status)
          throw diverged(
            { kind: 'replay', seen: String(answer.body?.status), expected: status },
            `duplicate: job shown ${String(answer.body?.status)}, model says ${status}`,
          );
      }
      return answer;
    });
  }
  toString = (): string => 'duplicate create';
}

export class MismatchCommand implements Command {
  constructor(readonly variant: number) {}
  check = (m: Readonly<ModelBox>): boolean => m.state.job !== null;
  plan = (state: ModelState): PlannedStep =>
    planned(this.toString(), 'mismatched create', mismatch(state));
  async run(m: ModelBox, r: RealRun): Promise<void> {
    await step(m, r, this.plan(m.state), () =>
      send(r, 'POST', '/v1/jobs', {
        headers: { 'idempotency-key': r.key },
        body: bodyOf(m.state.job!.intent, r.runId, this.variant),
      }),
    );
  }
  toString = (): string => `mismatched create (variant ${this.variant})`;
}

export class TryAgainCommand implements Command {
  constructor(
    readonly target: TryAgainTarget,
    readonly fates: Fate[],
  ) {}
  check = (m: Readonly<ModelBox>): boolean =>
    m.state.job !== null && m.state.job.attempts.length < 8;
  plan = (state: ModelState): PlannedStep =>
    planned(this.toString(), 'try again', tryAgain(state, this.target, this.fates));
  async run(m: ModelBox, r: RealRun): Promise<void> {
    await step(m, r, this.plan(m.state), () =>
      send(r, 'POST', `/v1/jobs/${r.jobId}/attempts`, {
        body: this.target === 'next' ? {} : { provider: this.target },
      }),
    );
  }
  toString = (): string => `try again(${this.target}, fates=[${this.fates.join(',')}])`;
}

/** Lets one held request go; `pick` chooses among the held ones. */
export class RespondCommand implements Command {
  constructor(
    readonly pick: number,
    readonly fates: Fate[],
  ) {}
  check = (m: Readonly<ModelBox>): boolean => heldAttempts(m.state).length > 0;
  private attempt(state: ModelState) {
    const held = heldAttempts(state);
    return held[this.pick % held.length]!;
  }
  plan = (state: ModelState): PlannedStep => {
    const attempt = this.attempt(state);
    return planned(
      `${this.toString()} → attempt ${attempt.seq} (${attempt.fate})`,
      `provider responds: ${attempt.fate}`,
      respond(state, attempt.seq, this.fates),
    );
  };
  async run(m: ModelBox, r: RealRun): Promise<void> {
    const attempt = this.attempt(m.state);
    await step(m, r, this.plan(m.state), async () => {
      r.stack.simulator.openGate(`${r.runId}:${attempt.seq}`);
      return { status: 0 };
    });
  }
  toString = (): string => `provider responds(#${this.pick}, fates=[${this.fates.join(',')}])`;
}

/** An operator's verdict, or a provider's signed callback, on an unknown or a settled attempt. */
export class SettleCommand implements Command {
  constructor(
    readonly by: 'operator' | 'callback',
    readonly pick: number,
    readonly outcome: 'succeeded' | 'failed',
    readonly fates: Fate[],
  ) {}
  private candidates(state: ModelState) {
    const all = [
      ...unknownAttempts(state),
      ...(this.by === 'operator' ? settledAttempts(state) : []),
    ];
    return this.by === 'callback'
      ? all.filter((a) => MODEL_PROVIDERS[a.provider].callbacks)
      : all.sort((a, b) => a.seq - b.seq);
  }
  check = (m: Readonly<ModelBox>): boolean => this.candidates(m.state).length > 0;
  private attempt(state: ModelState) {
    const candidates = this.candidates(state);
    return candidates[this.pick % candidates.length]!;
  }
  plan = (state: ModelState): PlannedStep => {
    const attempt = this.attempt(state);
    return planned(
      `${this.toString()} → attempt ${attempt.seq}`,
      this.by === 'operator' ? 'operator resolves' : 'signed callback',
      settle(state, attempt.seq, this.outcome, this.by, this.fates),
    );
  };
  async run(m: ModelBox, r: RealRun): Promise<void> {
    const attempt = this.attempt(m.state);
    const attemptId = `${r.jobId}:${attempt.seq}`;
    const job = m.state.job!;
    const result =
      job.intent.kind === 'charge'
        ? {
            id: `ch_${r.runId.replace(/[^a-z0-9]/gi, '')}_${attempt.seq}`,
            status: 'succeeded',
            amountCents: 1250,
            currency: 'EUR',
            account: `acct-${r.runId}`,
            idempotencyKey: attemptId,
          }
        : { summary: 'One job per intent.' };
    await step(m, r, this.plan(m.state), async () => {
      if (this.by === 'operator')
        return send(r, 'POST', `/v1/operator/attempts/${attemptId}/resolve`, {
          token: OPERATOR_TOKEN,
          body:
            this.outcome === 'failed'
              ? { outcome: 'failed', reason: 'model-based test' }
              : { outcome: 'succeeded', reason: 'model-based test', result },
        });
      const body = JSON.stringify(
        this.outcome === 'failed'
          ? { attemptId, status: 'failed', error: 'declined' }
          : { attemptId, status: 'succeeded', output: result },
      );
      const response = await fetch(`${r.stack.apiUrl}/v1/callbacks/${attempt.provider}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'onejob-signature': signCallback(
            CALLBACK_SECRETS[attempt.provider] ?? CALLBACK_SECRET,
            body,
          ),
        },
        body,
      });
      const text = await response.text();
      const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      return {
        status: response.status,
        problem:
          typeof parsed.type === 'string' ? parsed.type.replace(/^\/problems\//, '') : undefined,
        body: parsed,
      };
    });
  }
  toString = (): string =>
    `${this.by === 'operator' ? 'operator resolves' : 'signed callback'}(#${this.pick}, ${this.outcome}, fates=[${this.fates.join(',')}])`;
}

export class CancelCommand implements Command {
  check = (m: Readonly<ModelBox>): boolean => m.state.job !== null;
  plan = (state: ModelState): PlannedStep =>
    planned(this.toString(), 'operator cancels', cancel(state));
  async run(m: ModelBox, r: RealRun): Promise<void> {
    await step(m, r, this.plan(m.state), () =>
      send(r, 'POST', `/v1/operator/jobs/${r.jobId}/cancel`, {
        token: OPERATOR_TOKEN,
        body: { reason: 'model-based test' },
      }),
    );
  }
  toString = (): string => 'operator cancels';
}

/**
 * SIGKILL of the worker process, then a fresh one. Costly (a restart bundles the workflows and a
 * call's heartbeat must time out), so it runs only when `roll` is 0 and a request is held.
 */
export class KillWorkerCommand implements Command {
  constructor(
    readonly roll: number,
    readonly fates: Fate[],
  ) {}
  check = (m: Readonly<ModelBox>): boolean =>
    this.roll === 0 &&
    heldAttempts(m.state).some((a) => a.state === 'running' || a.state === 'unknown');
  plan = (state: ModelState): PlannedStep =>
    planned(this.toString(), 'worker killed and restarted', killWorker(state, this.fates));
  async run(m: ModelBox, r: RealRun): Promise<void> {
    await step(m, r, this.plan(m.state), async () => {
      await r.stack.killWorker('SIGKILL');
      await r.stack.restartWorker();
      return { status: 0 };
    });
  }
  toString = (): string => `worker killed and restarted(fates=[${this.fates.join(',')}])`;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const fatesArb = fc.array(fc.constantFrom(...FATES), { minLength: 3, maxLength: 3 });

export const intentArb: fc.Arbitrary<Intent> = fc.oneof(
  // Charges most often: they have status lookups, callbacks and the most ways to be unknown.
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<ProviderName[]>(['pay'], ['pay-t'], ['pay', 'pay-t'], ['pay-t', 'pay'])
      .map((plan): Intent => ({ kind: 'charge', plan, mode: 'exclusive' })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<ProviderName[]>(['chat'], ['chat-t'], ['chat', 'chat-t'], ['chat-t', 'chat'])
      .map((plan): Intent => ({ kind: 'summary', plan, mode: 'exclusive' })),
  },
  // A hedged job's primary times out at once, so no hedge depends on a clock (see the docs).
  {
    weight: 2,
    arbitrary: fc.constant<Intent>({ kind: 'summary', plan: ['chat-t', 'chat'], mode: 'hedged' }),
  },
);

export const createArb = fc
  .tuple(intentArb, fatesArb)
  .map(([intent, fates]) => new CreateCommand(intent, fates));

export const commandArbs: Array<fc.Arbitrary<Command>> = [
  fc.constant(new DuplicateCommand()),
  fc.integer({ min: 1, max: 3 }).map((variant) => new MismatchCommand(variant)),
  fc
    .tuple(fc.constantFrom<TryAgainTarget>('next', 'pay', 'pay-t', 'chat', 'chat-t'), fatesArb)
    .map(([target, fates]) => new TryAgainCommand(target, fates)),
  // Providers answering is the common step: listed three times.
  ...[0, 1, 2].map(() =>
    fc.tuple(fc.nat(3), fatesArb).map(([pick, fates]) => new RespondCommand(pick, fates)),
  ),
  ...(['operator', 'callback'] as const).map((by) =>
    fc
      .tuple(fc.nat(3), fc.constantFrom<'succeeded' | 'failed'>('succeeded', 'failed'), fatesArb)
      .map(([pick, outcome, fates]) => new SettleCommand(by, pick, outcome, fates)),
  ),
  fc.constant(new CancelCommand()),
  fc
    .tuple(fc.integer({ min: 0, max: 5 }), fatesArb)
    .map(([roll, fates]) => new KillWorkerCommand(roll, fates)),
];

export interface ScenarioOptions {
  maxCommands: number;
}

/** One run: a create, then a sequence of protocol steps. */
export const scenarioArb = (options: ScenarioOptions) =>
  fc.tuple(createArb, fc.commands(commandArbs, { maxCommands: options.maxCommands }));

// ---------------------------------------------------------------------------------------------
// Every kind of step

/**
 * The kinds of step the model-based test must make (over all its runs): each command with each
 * answer it can get, and each thing a provider may do when let go.
 */
export const STEP_KINDS: readonly string[] = [
  'create 201',
  'duplicate create 200',
  'mismatched create 409',
  'try again 202',
  'try again 400',
  'try again 409',
  ...FATES.map((fate) => `provider responds: ${fate}`),
  'operator resolves 200',
  'operator resolves 409',
  'signed callback 200',
  'operator cancels 200',
  'operator cancels 409',
  'worker killed and restarted',
];

/** The kinds of step a scenario makes, known from the model alone (as fast-check runs it). */
export function stepKindsOf(first: CreateCommand, commands: readonly Command[]): string[] {
  const model: ModelBox = { state: initialModel() };
  const kinds: string[] = [];
  for (const command of [first, ...commands]) {
    if (!command.check(model)) continue;
    const { kind, prediction } = command.plan(model.state);
    kinds.push(kind);
    model.state = prediction.next;
  }
  return kinds;
}

/**
 * Scenarios, drawn from the same commands with `seed`, that between them make each of `kinds`
 * (those the model can reach within `options`): the first drawn that makes one still missing.
 */
export function scenariosMaking(
  kinds: readonly string[],
  seed: number,
  options: ScenarioOptions,
): Array<[CreateCommand, Command[]]> {
  const missing = new Set(kinds);
  const chosen: Array<[CreateCommand, Command[]]> = [];
  const drawn = fc.sample(
    fc.tuple(createArb, fc.array(fc.oneof(...commandArbs), { maxLength: options.maxCommands })),
    { seed, numRuns: 5_000 },
  );
  for (const [first, commands] of drawn) {
    if (missing.size === 0) break;
    const makes = stepKindsOf(first, commands).filter((kind) => missing.has(kind));
    if (makes.length === 0) continue;
    chosen.push([first, commands]);
    for (const kind of makes) missing.delete(kind);
  }
  return chosen;
}

let runCounter = 0;

/**
 * Runs one scenario against the stack: fresh key, the model from scratch, every command checked;
 * afterwards every held request is let go and an open job cancelled, so the next run starts
 * clean. A failure is a RunFailure (an error that is not one of ours counts as infrastructure),
 * and carries the run's step log.
 */
export async function runScenario(
  stack: TestStack,
  first: CreateCommand,
  commands: Iterable<fc.AsyncCommand<ModelBox, RealRun>>,
): Promise<void> {
  const runId = `mbt-${Date.now().toString(36)}-${++runCounter}`;
  stack.simulator.clearFaults();
  const real: RealRun = { stack, runId, key: runId, body: null, jobId: null, gates: [], log: [] };
  try {
    await fc.asyncModelRun(
      () => ({ model: { state: initialModel() }, real }),
      [first, ...commands],
    );
  } catch (error) {
    const failure = error instanceof RunFailure ? error : undefined;
    const message = `${(error as Error).message}\n  job ${real.jobId ?? '(none)'}; steps run:\n    ${real.log.join('\n    ')}`;
    throw new RunFailure(failure?.kind ?? 'infrastructure', message, failure?.divergence);
  } finally {
    await cleanUp(real);
  }
}

async function cleanUp(real: RealRun): Promise<void> {
  for (const gate of real.gates) real.stack.simulator.openGate(gate);
  if (!real.jobId) return;
  await send(real, 'POST', `/v1/operator/jobs/${real.jobId}/cancel`, {
    token: OPERATOR_TOKEN,
    body: { reason: 'model-based run over' },
  }).catch(() => undefined);
  // Wait until no call of this job is left to make or to finish (best effort).
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const job = await readJob(real).catch(() => undefined);
    if (!job || job.attempts.every((a) => a.state !== 'starting' && a.state !== 'running')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
