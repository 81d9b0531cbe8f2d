/**
 * Records the replay histories from a live run: `npm run replay:record` records the scenarios
 * that have no history yet; `npm run replay:record -- <scenario>…` (re-)records those;
 * `npm run replay:record -- --all` re-records every one. Each scenario runs a real job through
 * the real stack (Temporal dev server, PostgreSQL, worker, API, simulator), is checked to have
 * taken the path its name says (test/replay/paths.ts; otherwise nothing is saved and the
 * recording fails), and its workflow history is saved to test/replay/histories/<scenario>.json.
 * `npm run replay:record -- --traced` records the TRACED_SCENARIOS (paths.ts) as a traced request
 * starts them, into test/replay/histories/traced/. Commit the result; test/engines/replay.test.ts
 * replays every file against the current workflow code.
 * Histories recorded by older code are worth keeping: re-record only what you mean to replace.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProviderConfig } from '../../src/providers/provider';
import { startJob } from '../../src/temporal/startJob';
import { holdStatement, holdTransaction } from '../support/barriers';
import globalSetup from '../support/globalSetup';
import globalTeardown from '../support/globalTeardown';
import { OPERATOR_TOKEN } from '../support/identities';
import { eventually } from '../support/polling';
import { chatProvider, payProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { untilCallEnded } from '../support/rows';
import { startTestStack, type TestStack } from '../support/stack';
import { pathProblems, SCENARIO_NAMES, TRACED_SCENARIOS } from './paths';

export const HISTORIES_DIR = path.join(__dirname, 'histories');
/** Histories of runs started by a traced request (the API traced, the create a traceparent). */
export const TRACED_HISTORIES_DIR = path.join(HISTORIES_DIR, 'traced');

const providers = (url: string): ProviderConfig[] => [
  chatProvider(url, 'chat', 'sim-steady', { timeoutMs: 10_000 }),
  // The attempt timeouts the histories were recorded with: their scenarios' hangs, holds and
  // delays must time out (a history holds each call's timeouts, so these stay as recorded).
  chatProvider(url, 'chat-quick', 'sim-steady', { timeoutMs: TIMES_OUT_SOON_MS }),
  chatProvider(url, 'chat-backup', 'sim-backup', { timeoutMs: 5_000 }),
  payProvider(url, 'pay', { timeoutMs: TIMES_OUT_SOON_MS }),
  payProvider(url, 'pay-backup', { timeoutMs: TIMES_OUT_SOON_MS }),
  // A call that goes silent is timed out by Temporal after 1.5 s (its start-to-close and heartbeat
  // timeouts), and retried soon after.
  payProvider(url, 'pay-retried', {
    timeoutMs: 1_500,
    retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 100 },
  }),
  // A call that hangs outlives its 1 s attempt and is cut off when its window closes at 2 s.
  chatProvider(url, 'chat-cut-off', 'sim-steady', {
    timeoutMs: TIMES_OUT_SOON_MS,
    lateResultTimeoutMs: 2_000,
    retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 100 },
  }),
];

type Scenario = (stack: TestStack, key: string) => Promise<string>;

/** Temporal's own cancel (Web UI, CLI, parent), which is an operator's cancel. */
async function cancelThroughTemporal(stack: TestStack, id: string): Promise<void> {
  const { rows } = await stack.pool.query<{ workflow_id: string }>(
    'SELECT workflow_id FROM jobs WHERE id = $1',
    [id],
  );
  await stack.temporal.workflow.getHandle(rows[0]!.workflow_id).cancel();
}

/** Set while traced histories are recorded: each create then brings a sampled traceparent. */
let tracedRecording = false;

async function create(stack: TestStack, key: string, body: unknown): Promise<string> {
  const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
  const response = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': key, ...(tracedRecording ? { traceparent } : {}) },
    body,
  });
  if (response.status !== 201)
    throw new Error(`create ${key}: HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}
const summarize = (providers: string[], mode: 'exclusive' | 'hedged' = 'exclusive') => ({
  type: 'summarize',
  input: { text: 'Replay keeps workflows honest. Histories are the proof.' },
  providers,
  mode,
});
const charge = (providers: string[]) => ({
  type: 'charge',
  input: { amountCents: 4200, currency: 'EUR', account: 'acct-replay' },
  providers,
});
/** A summary started on Temporal with `startJob` (the Temporal-native entry point). */
const startNative = (stack: TestStack, key: string) =>
  startJob(stack.temporal, {
    owner: 'svc-replay',
    idempotencyKey: key,
    ...summarize(['chat']),
    taskQueue: stack.taskQueue,
  });
const status = async (stack: TestStack, id: string) =>
  ((await (await stack.request('GET', `/v1/jobs/${id}`)).json()) as { status: string }).status;

const SCENARIOS: Record<string, Scenario> = {
  'happy-path': (stack, key) => create(stack, key, summarize(['chat'])),
  'definite-failure-then-fallback': async (stack, key) => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'fail_before', status: 402 } });
    return create(stack, key, charge(['pay', 'pay-backup']));
  },
  'timeout-unknown-late-success': async (stack, key) => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'delay', ms: 3_000 } });
    return create(stack, key, charge(['pay', 'pay-backup']));
  },
  'unknown-operator-resolve': async (stack, key) => {
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const id = await create(stack, key, charge(['pay', 'pay-backup']));
    await eventually(
      () => status(stack, id),
      (s) => s === 'unknown',
    );
    await stack.request('POST', `/v1/operator/attempts/${id}:1/resolve`, {
      token: OPERATOR_TOKEN,
      body: { outcome: 'failed', reason: 'bank confirms no charge' },
    });
    return id;
  },
  'hedged-reverse-order': async (stack, key) => {
    // Timers on a busy dev server fire up to a second late: leave the hedge plenty of room.
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'delay', ms: 2_500 },
    });
    return create(stack, key, summarize(['chat', 'chat-backup'], 'hedged'));
  },
  'contract-violation-after-effect': async (stack, key) => {
    // The charge is made, but its answer breaks the contract: unknown, then the status lookup.
    stack.simulator.inject({
      route: 'charge',
      fault: { kind: 'answer_with', merge: { fee: 35 } },
    });
    return create(stack, key, charge(['pay', 'pay-backup']));
  },
  'temporal-cancel': async (stack, key) => {
    stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hang' } });
    const id = await create(stack, key, summarize(['chat']));
    await eventually(
      () => status(stack, id),
      (s) => s === 'running',
    );
    await cancelThroughTemporal(stack, id);
    return id;
  },
  'admission-update': async (stack, key) => {
    // The Temporal-native entry point: update-with-start, whose `admit` update answers the job id.
    const started = await startNative(stack, key);
    return started.jobId;
  },
  'admission-update-slow-admission': async (stack, key) => {
    // The same Temporal-native start, with its local admission held longer than a workflow task
    // timeout (10 s): writes to jobs wait for a lock, so Temporal heartbeats the workflow task
    // while the admit update waits on admission. The shape that broke replay in SDK 1.24 when a
    // local activity outlasted its task beside other work.
    const barrier = await holdTransaction(stack, 'LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE');
    const started = startNative(stack, key);
    try {
      await barrier.blocked('WITH existing');
      // A recording, not a test: waiting out the task timeout is the point.
      await new Promise((resolve) => setTimeout(resolve, 15_000));
    } finally {
      await barrier.release();
    }
    return (await started).jobId;
  },
  'status-lookup-success': async (stack, key) => {
    // Charged, then the connection dropped: unknown, until the status lookup finds the charge.
    stack.simulator.inject({ route: 'charge', fault: { kind: 'drop_after' } });
    return create(stack, key, charge(['pay', 'pay-backup']));
  },
  'never-sent-retried': async (stack, key) => {
    // Attempt 1's begin is held in this process's database driver (the recorder's worker runs in
    // this process): its call never starts, the activity goes silent, and Temporal times it out.
    // Nothing was sent, so the attempt fails never_sent and is tried again on its provider, which
    // wins. The held begin, let go after the job ended, finds the attempt settled and sends nothing.
    const begin = holdStatement('attempts.begin-provider-call', (values) =>
      String(values[0]).endsWith(':1'),
    );
    try {
      const id = await create(stack, key, charge(['pay-retried']));
      await begin.reached;
      await eventually(
        () => status(stack, id),
        (s) => s === 'succeeded',
      );
      begin.release();
      await begin.answered;
      return id;
    } finally {
      begin.restore();
    }
  },
  'late-window-retried': async (stack, key) => {
    // Attempt 1's call hangs: Temporal times the attempt out (unknown), the call is cut off when
    // its window closes (failed, late_window_exceeded), and the provider is tried again.
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      times: 1,
      fault: { kind: 'hang' },
    });
    const id = await create(stack, key, summarize(['chat-cut-off']));
    await eventually(
      () => status(stack, id),
      (s) => s === 'succeeded',
    );
    return id;
  },
  webhooks: async (stack, key) => {
    // An owner with an endpoint where nobody listens: the senders' tries are in their own
    // workflows, not in this history, which shows the job handing its events over.
    const registered = await stack.request('POST', '/v1/webhooks', {
      body: { url: 'http://127.0.0.1:9/replay-hooks' },
    });
    const endpoint = ((await registered.json()) as { id: string }).id;
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hold', gate: `${key}-charge` } });
    const id = await create(stack, key, charge(['pay']));
    // Unknown past the threshold: the job calls for an operator; then the late charge wins.
    await eventually(
      async () =>
        (
          await stack.pool.query(
            `SELECT 1 FROM webhook_deliveries
              WHERE job_id = $1 AND event = 'job.needs_operator' AND tries > 0`,
            [id],
          )
        ).rowCount,
      (count) => count === 1,
      60_000,
    );
    stack.simulator.openGate(`${key}-charge`);
    // The ending waits behind the unanswered event: the job's own run has handed it over once
    // the run has closed.
    const { rows } = await stack.pool.query<{ workflow_id: string }>(
      'SELECT workflow_id FROM jobs WHERE id = $1',
      [id],
    );
    await stack.temporal.workflow.getHandle(rows[0]!.workflow_id).result();
    await stack.request('DELETE', `/v1/webhooks/${endpoint}`);
    return id;
  },
  cancel: async (stack, key) => {
    stack.simulator.inject({ route: 'chat', model: 'sim-steady', fault: { kind: 'hang' } });
    const id = await create(stack, key, summarize(['chat-quick']));
    await eventually(
      () => status(stack, id),
      (s) => s === 'unknown',
    );
    await stack.request('POST', `/v1/operator/jobs/${id}/cancel`, {
      token: OPERATOR_TOKEN,
      body: { reason: 'customer withdrew' },
    });
    return id;
  },
};

/** Scenarios recorded on a stack whose hedge delay never runs out while they run. */
const LONG_HEDGE_SCENARIOS: Record<string, Scenario> = {
  'user-try-again': async (stack, key) => {
    // The primary holds its answer; long before the hedge delay, the user asks for the fallback.
    stack.simulator.inject({
      route: 'chat',
      model: 'sim-steady',
      fault: { kind: 'hold', gate: `${key}-primary` },
    });
    const id = await create(stack, key, summarize(['chat', 'chat-backup'], 'hedged'));
    await eventually(
      () => status(stack, id),
      (s) => s === 'running',
    );
    const asked = await stack.request('POST', `/v1/jobs/${id}/attempts`, {
      body: { provider: 'chat-backup' },
    });
    if (asked.status !== 202)
      throw new Error(`try again: HTTP ${asked.status} ${await asked.text()}`);
    await eventually(
      () => status(stack, id),
      (s) => s === 'succeeded',
    );
    stack.simulator.openGate(`${key}-primary`);
    return id;
  },
};

const historyFile = (name: string): string =>
  path.join(tracedRecording ? TRACED_HISTORIES_DIR : HISTORIES_DIR, `${name}.json`);

/** Saves a scenario's history once it has shown the path the scenario names. */
async function save(
  name: string,
  history: Parameters<typeof pathProblems>[1],
  note: string,
): Promise<void> {
  const problems = pathProblems(name, history);
  if (problems.length > 0)
    throw new Error(
      `the ${name} scenario took another path; its history is not saved. Not shown: ${problems.join('; ')}`,
    );
  await writeFile(historyFile(name), `${historyToJSON(history)}\n`);
  console.log(`recorded ${name}: ${note}`);
}

/** Runs the wanted scenarios and saves the history of each one's job workflow. */
async function recordScenarios(
  from: Record<string, Scenario>,
  hedgeDelayMs: number,
  wanted: (name: string) => boolean,
): Promise<void> {
  const scenarios = Object.entries(from).filter(([name]) => wanted(name));
  if (scenarios.length === 0) return;
  const stack = await startTestStack({
    providers,
    hedgeDelayMs,
    env: {
      // An attempt unknown for a second calls for an operator (the webhooks scenario).
      ONEJOB_NEEDS_OPERATOR_AFTER_MS: '1000',
      // The API traces (its spans go nowhere: only the headers it gives Temporal matter here).
      ...(tracedRecording ? { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } : {}),
    },
  });
  try {
    await stack.certify('chat-backup', 'summarize');
    await stack.certify('pay-backup', 'charge');
    for (const [name, scenario] of scenarios) {
      const key = `replay-${name}-${Date.now()}`;
      const id = await scenario(stack, key);
      const { rows } = await stack.pool.query<{ workflow_id: string }>(
        'SELECT workflow_id FROM jobs WHERE id = $1',
        [id],
      );
      const handle = stack.temporal.workflow.getHandle(rows[0]!.workflow_id);
      const outcome = await handle.result().then(
        (result: { status: string }) => `job ${result.status}`,
        (error: Error) => `workflow ${error.name}`,
      );
      const history = await handle.fetchHistory();
      await save(name, history, `${history.events?.length ?? 0} events, ${outcome}`);
    }
  } finally {
    await stack.stop();
  }
}

/**
 * A job blocked in unknown through several continued runs (a tiny history bound), settled by
 * an operator: the first run's history (it ends by continuing-as-new) and the last run's.
 */
async function recordContinueAsNew(): Promise<void> {
  const stack = await startTestStack({
    providers,
    env: {
      ONEJOB_HISTORY_EVENT_LIMIT: '60',
      ONEJOB_RECONCILE_MAX_DELAY_MS: '200',
      ONEJOB_BLOCKED_SELF_LOOK_MS: '200',
    },
  });
  try {
    await stack.certify('pay-backup', 'charge');
    stack.simulator.inject({ route: 'charge', fault: { kind: 'hang' } });
    const id = await create(
      stack,
      `replay-continue-as-new-${Date.now()}`,
      charge(['pay', 'pay-backup']),
    );
    const { rows } = await stack.pool.query<{ workflow_id: string }>(
      'SELECT workflow_id FROM jobs WHERE id = $1',
      [id],
    );
    const handle = stack.temporal.workflow.getHandle(rows[0]!.workflow_id);
    const firstRunId = (await handle.describe()).runId;
    await eventually(
      () => handle.query<{ run: number }>('status'),
      (s) => s.run >= 3,
      60_000,
    );
    // Once the call has ended (its late-result window closed), an operator's `failed` settles
    // the attempt at once, so the run that takes the resolution is the job's last. Before, the
    // resolution is held until the call ends, and the run may continue as new meanwhile.
    await untilCallEnded(stack.pool, `${id}:1`);
    await stack.request('POST', `/v1/operator/attempts/${id}:1/resolve`, {
      token: OPERATOR_TOKEN,
      body: { outcome: 'failed', reason: 'bank confirms no charge' },
    });
    const result = await handle.result();
    const firstRun = await stack.temporal.workflow
      .getHandle(handle.workflowId, firstRunId)
      .fetchHistory();
    await save(
      'continue-as-new-first-run',
      firstRun,
      `${firstRun.events?.length ?? 0} events, continued as new`,
    );
    const lastRun = await handle.fetchHistory();
    await save(
      'continue-as-new-last-run',
      lastRun,
      `${lastRun.events?.length ?? 0} events, job ${result.status}`,
    );
  } finally {
    await stack.stop();
  }
}

const CONTINUE_AS_NEW = ['continue-as-new-first-run', 'continue-as-new-last-run'];

/** Which scenarios to record, from the command line (see the top of this file). */
function chooseScenarios(args: string[]): (name: string) => boolean {
  const all = args.includes('--all');
  const named = args.filter((arg) => !arg.startsWith('--'));
  const known = [
    ...Object.keys(SCENARIOS),
    ...Object.keys(LONG_HEDGE_SCENARIOS),
    ...CONTINUE_AS_NEW,
  ];
  const unknown = named.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new Error(`no such scenario: ${unknown.join(', ')} (known: ${known.join(', ')})`);
  const undescribed = known.filter((name) => !SCENARIO_NAMES.includes(name));
  if (undescribed.length > 0)
    throw new Error(`test/replay/paths.ts describes no path for ${undescribed.join(', ')}`);
  if (all) return () => true;
  if (named.length > 0) return (name) => named.includes(name);
  return (name) => !existsSync(historyFile(name));
}

async function main(): Promise<void> {
  process.env.LOG_LEVEL ??= 'warn';
  if (process.argv.includes('--traced')) return recordTraced();
  const wanted = chooseScenarios(process.argv.slice(2));
  const chosen = [
    ...Object.keys(SCENARIOS),
    ...Object.keys(LONG_HEDGE_SCENARIOS),
    ...CONTINUE_AS_NEW,
  ].filter(wanted);
  if (chosen.length === 0) {
    console.log('every scenario has a history; name the ones to re-record, or pass --all');
    return;
  }
  console.log(`recording ${chosen.join(', ')}`);
  await globalSetup();
  try {
    await recordScenarios(SCENARIOS, 300, wanted);
    await recordScenarios(LONG_HEDGE_SCENARIOS, 600_000, wanted);
    if (CONTINUE_AS_NEW.some(wanted)) await recordContinueAsNew();
  } finally {
    await globalTeardown();
  }
}

/** The TRACED_SCENARIOS again, each started by a traced request, into TRACED_HISTORIES_DIR. */
async function recordTraced(): Promise<void> {
  console.log(`recording ${TRACED_SCENARIOS.join(', ')}, traced`);
  tracedRecording = true;
  await globalSetup();
  try {
    await recordScenarios(SCENARIOS, 300, (name) => TRACED_SCENARIOS.includes(name));
  } finally {
    await globalTeardown();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
