/**
 * What each recorded scenario must show in its history: the path its name says it took. The
 * recorder refuses to save a history that took another path (a fault that missed, a race that
 * went the other way), and test/engines/replay.test.ts checks the committed histories the same way.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { settledPatches } from '../../src/workflows/patchEpochs';
import { LATE_WINDOW_RETRIED, NEVER_SENT_RETRIED } from '../../src/workflows/patches';

type History = temporal.api.history.v1.IHistory;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

interface ActivityFact {
  type: string;
  summary?: string;
  input?: Record<string, unknown>;
  result?: Record<string, unknown>;
  timedOut: boolean;
}

/** The facts of a history that the scenarios are told apart by. */
export interface HistoryFacts {
  /** Activity tasks (each with its own events), in the order they were scheduled. */
  activities: ActivityFact[];
  /** Local activities, from their markers, in order. */
  localActivities: Array<{ type: string; result?: Record<string, unknown> }>;
  /** Patch markers, by id: the patches the code asked and took (see tookPatch). */
  patches: string[];
  /** Child workflows started, by workflow id. */
  children: string[];
  /** Updates accepted, by name, with whether they completed successfully. */
  updates: Array<{ name: string; succeeded: boolean }>;
  signals: string[];
  timers: Array<{ summary?: string; fired: boolean }>;
  cancelRequested: boolean;
  /** Workflow tasks completed before the first local activity's marker (a task heartbeated). */
  workflowTasksBeforeLocalActivity: number;
  /** The workflow's first input. */
  input?: Record<string, unknown>;
  closed?: 'completed' | 'failed' | 'canceled' | 'continued-as-new' | 'terminated';
  result?: Record<string, unknown>;
}

function first(payloads: Payloads): Record<string, unknown> | undefined {
  const payload = payloads?.payloads?.[0];
  return payload
    ? defaultPayloadConverter.fromPayload<Record<string, unknown>>(payload)
    : undefined;
}

function text(payload: temporal.api.common.v1.IPayload | null | undefined): string | undefined {
  return payload ? defaultPayloadConverter.fromPayload<string>(payload) : undefined;
}

/** Whether the run took a patch's path: marked in its history, or settled by its epoch. */
export function tookPatch(facts: HistoryFacts, patchId: string): boolean {
  const epoch = facts.input?.patchEpoch;
  return (
    facts.patches.includes(patchId) ||
    settledPatches(typeof epoch === 'number' ? epoch : undefined).has(patchId)
  );
}

export function factsOf(history: History): HistoryFacts {
  const facts: HistoryFacts = {
    activities: [],
    localActivities: [],
    patches: [],
    children: [],
    updates: [],
    signals: [],
    timers: [],
    cancelRequested: false,
    workflowTasksBeforeLocalActivity: 0,
  };
  const activities = new Map<string, ActivityFact>();
  const timers = new Map<string, { summary?: string; fired: boolean }>();
  const updates = new Map<string, { name: string; succeeded: boolean }>();
  for (const event of history.events ?? []) {
    const id = String(event.eventId);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const fact: ActivityFact = {
        type: scheduled.activityType?.name ?? '',
        summary: text(event.userMetadata?.summary),
        input: first(scheduled.input),
        timedOut: false,
      };
      activities.set(id, fact);
      facts.activities.push(fact);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const fact = activities.get(String(completed.scheduledEventId));
      if (fact) fact.result = first(completed.result);
    }
    const timedOut = event.activityTaskTimedOutEventAttributes;
    if (timedOut) {
      const fact = activities.get(String(timedOut.scheduledEventId));
      if (fact) fact.timedOut = true;
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_patch') {
      const id = first(marker.details?.['patch-data'])?.id;
      if (typeof id === 'string') facts.patches.push(id);
    }
    if (event.workflowTaskCompletedEventAttributes && facts.localActivities.length === 0)
      facts.workflowTasksBeforeLocalActivity += 1;
    if (marker?.markerName === 'core_local_activity') {
      const type = first(marker.details?.data)?.activity_type;
      if (typeof type === 'string')
        facts.localActivities.push({ type, result: first(marker.details?.result) });
    }
    if (event.timerStartedEventAttributes) {
      const timer = { summary: text(event.userMetadata?.summary), fired: false };
      timers.set(event.timerStartedEventAttributes.timerId ?? id, timer);
      facts.timers.push(timer);
    }
    if (event.timerFiredEventAttributes) {
      const timer = timers.get(event.timerFiredEventAttributes.timerId ?? '');
      if (timer) timer.fired = true;
    }
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted) {
      const update = { name: accepted.acceptedRequest?.input?.name ?? '', succeeded: false };
      updates.set(accepted.acceptedRequest?.meta?.updateId ?? id, update);
      facts.updates.push(update);
    }
    const updated = event.workflowExecutionUpdateCompletedEventAttributes;
    if (updated) {
      const update = updates.get(updated.meta?.updateId ?? '');
      if (update) update.succeeded = Boolean(updated.outcome?.success);
    }
    if (event.workflowExecutionSignaledEventAttributes)
      facts.signals.push(event.workflowExecutionSignaledEventAttributes.signalName ?? '');
    if (event.workflowExecutionCancelRequestedEventAttributes) facts.cancelRequested = true;
    const child = event.startChildWorkflowExecutionInitiatedEventAttributes;
    if (child) facts.children.push(child.workflowId ?? '');
    if (event.workflowExecutionStartedEventAttributes)
      facts.input = first(event.workflowExecutionStartedEventAttributes.input);
    if (event.workflowExecutionCompletedEventAttributes) {
      facts.closed = 'completed';
      facts.result = first(event.workflowExecutionCompletedEventAttributes.result);
    }
    if (event.workflowExecutionFailedEventAttributes) facts.closed = 'failed';
    if (event.workflowExecutionCanceledEventAttributes) facts.closed = 'canceled';
    if (event.workflowExecutionContinuedAsNewEventAttributes) facts.closed = 'continued-as-new';
    if (event.workflowExecutionTerminatedEventAttributes) facts.closed = 'terminated';
  }
  return facts;
}

const calls = (facts: HistoryFacts): ActivityFact[] =>
  facts.activities.filter((a) => a.type === 'callProvider');
/** What the database steps of a type returned, whether run as activity tasks or locally. */
const results = (facts: HistoryFacts, type: string): Array<Record<string, unknown> | undefined> =>
  [...facts.activities, ...facts.localActivities]
    .filter((a) => a.type === type)
    .map((a) => a.result);
const hasUpdate = (facts: HistoryFacts, name: string): boolean =>
  facts.updates.some((u) => u.name === name && u.succeeded);
const wonBy = (facts: HistoryFacts, status: string, seq?: number): boolean =>
  facts.result?.status === status &&
  (seq === undefined || String(facts.result.completedBy).endsWith(`:${seq}`));
/** The plan admission made for the job (its providers, its cap on attempts). */
const admitted = (
  facts: HistoryFacts,
): { providers?: Array<{ name: string }>; maxAttempts?: number } | undefined =>
  results(facts, 'admitJob')[0] as
    { providers?: Array<{ name: string }>; maxAttempts?: number } | undefined;

/** Each scenario's path, as a list of [what must hold, whether it does]. */
const PATHS: Record<string, (facts: HistoryFacts) => Array<[string, boolean]>> = {
  'happy-path': (f) => [
    ['one provider call', calls(f).length === 1],
    ['the job succeeded with attempt 1', wonBy(f, 'succeeded', 1)],
  ],
  'definite-failure-then-fallback': (f) => [
    ['the first call failed definitely', calls(f)[0]?.result?.state === 'failed'],
    ['a second call, on the fallback', calls(f).length === 2],
    ['the job succeeded with attempt 2', wonBy(f, 'succeeded', 2)],
  ],
  'timeout-unknown-late-success': (f) => [
    ['the only provider call timed out', calls(f).length === 1 && calls(f)[0]!.timedOut],
    ['the attempt was abandoned as unknown', results(f, 'abandonAttempt')[0]?.state === 'unknown'],
    ['the job succeeded with attempt 1', wonBy(f, 'succeeded', 1)],
  ],
  'unknown-operator-resolve': (f) => [
    ['the first call timed out', calls(f)[0]?.timedOut === true],
    ['an operator resolved it', hasUpdate(f, 'resolveAttempt')],
    ['the fallback then ran and won', calls(f).length === 2 && wonBy(f, 'succeeded', 2)],
  ],
  'hedged-reverse-order': (f) => [
    [
      'the hedge timer fired',
      f.timers.some((t) => t.summary?.startsWith('hedge delay') && t.fired),
    ],
    ['two provider calls', calls(f).length === 2],
    ['the hedge (attempt 2) won', wonBy(f, 'succeeded', 2)],
  ],
  'contract-violation-after-effect': (f) => [
    ['the call ended unknown', calls(f).length === 1 && calls(f)[0]?.result?.state === 'unknown'],
    [
      'a status lookup settled it',
      results(f, 'reconcileAttempt').some((r) => r?.state === 'succeeded'),
    ],
    ['the job succeeded with attempt 1', wonBy(f, 'succeeded', 1)],
  ],
  'temporal-cancel': (f) => [
    ['Temporal was asked to cancel', f.cancelRequested],
    ['the workflow closed as cancelled', f.closed === 'canceled'],
  ],
  cancel: (f) => [
    ['an operator cancelled through the update', hasUpdate(f, 'cancelJob')],
    ['the job ended cancelled', wonBy(f, 'cancelled')],
  ],
  'continue-as-new-first-run': (f) => [
    ['a fresh run (nothing carried)', f.input?.carried === undefined],
    ['it continued as new', f.closed === 'continued-as-new'],
  ],
  'continue-as-new-last-run': (f) => [
    ['a run that carries state', f.input?.carried !== undefined],
    ['an operator resolved the attempt', hasUpdate(f, 'resolveAttempt')],
    ['it completed', f.closed === 'completed'],
  ],
  'admission-update': (f) => [
    ['started by the Temporal-native path (no job row yet)', f.input?.jobId === undefined],
    ['the admit update was accepted and answered', hasUpdate(f, 'admit')],
    ['the job succeeded with attempt 1', wonBy(f, 'succeeded', 1)],
  ],
  'admission-update-slow-admission': (f) => [
    ['started by the Temporal-native path (no job row yet)', f.input?.jobId === undefined],
    ['the admit update was accepted and answered', hasUpdate(f, 'admit')],
    [
      'the local admission outlasted a workflow task (Temporal heartbeated the task)',
      f.workflowTasksBeforeLocalActivity >= 2,
    ],
    ['the job succeeded with attempt 1', wonBy(f, 'succeeded', 1)],
  ],
  'user-try-again': (f) => [
    ['the user’s request was accepted and answered', hasUpdate(f, 'requestAttempt')],
    ['no hedge timer started the second attempt', f.timers.every((t) => !t.fired)],
    [
      'the second call ran on the provider asked for',
      calls(f)[1]?.summary === 'attempt 2 on chat-backup',
    ],
    ['the requested attempt won', wonBy(f, 'succeeded', 2)],
  ],
  webhooks: (f) => [
    [
      'attempt 1, unknown past the threshold, called for an operator',
      results(f, 'raiseNeedsOperator')[0]?.eventKey === `job.needs_operator:${f.input?.jobId}:1`,
    ],
    ['a sender was started for it', f.children.some((id) => id.includes('/job.needs_operator:'))],
    ['the late charge won', wonBy(f, 'succeeded', 1)],
    ['the ending was handed to a sender', f.children.some((id) => id.endsWith('/job.succeeded'))],
  ],
  'never-sent-retried': (f) => [
    ['attempt 1’s call went silent and Temporal gave it up', calls(f)[0]?.timedOut === true],
    [
      'attempt 1 was abandoned before its call began: failed, never_sent',
      results(f, 'abandonAttempt')[0]?.state === 'failed' &&
        (results(f, 'abandonAttempt')[0]?.error as { code?: string } | undefined)?.code ===
          'never_sent',
    ],
    ['the retry was decided under the patch never-sent-retried', tookPatch(f, NEVER_SENT_RETRIED)],
    [
      'attempt 2 ran on the same provider',
      calls(f).length === 2 &&
        calls(f)[1]?.summary === calls(f)[0]?.summary?.replace(/^attempt 1 /, 'attempt 2 '),
    ],
    ['the job succeeded with attempt 2', wonBy(f, 'succeeded', 2)],
  ],
  'late-window-retried': (f) => [
    ['attempt 1’s call went silent and Temporal gave it up', calls(f)[0]?.timedOut === true],
    [
      'attempt 1 settled failed, cut off when its window closed',
      results(f, 'reconcileAttempt').some(
        (r) =>
          r?.state === 'failed' &&
          (r.error as { code?: string } | undefined)?.code === 'late_window_exceeded',
      ),
    ],
    [
      'the retry was decided under the patch late-window-retried',
      tookPatch(f, LATE_WINDOW_RETRIED),
    ],
    [
      'attempt 2 ran on the same provider',
      calls(f).length === 2 &&
        calls(f)[1]?.summary === calls(f)[0]?.summary?.replace(/^attempt 1 /, 'attempt 2 '),
    ],
    ['the job succeeded with attempt 2', wonBy(f, 'succeeded', 2)],
  ],
  'retry-takes-last-attempt': (f) => [
    [
      'a plan of two providers, with a cap of two attempts',
      admitted(f)?.providers?.length === 2 && admitted(f)?.maxAttempts === 2,
    ],
    [
      'the first call failed with a 429',
      calls(f)[0]?.result?.state === 'failed' &&
        (calls(f)[0]?.result?.error as { code?: string } | undefined)?.code === 'http_429',
    ],
    [
      'the wait before a retry fired',
      f.timers.some((t) => t.summary?.startsWith('retrying ') && t.fired),
    ],
    [
      'attempt 2, the last the cap allows, ran on the first provider again',
      calls(f)[1]?.summary === `attempt 2 on ${admitted(f)?.providers?.[0]?.name}`,
    ],
    ['the fallback was never called', calls(f).length === 2],
    ['the job succeeded with attempt 2', wonBy(f, 'succeeded', 2)],
  ],
  'status-lookup-success': (f) => [
    [
      'the only call ended unknown',
      calls(f).length === 1 && calls(f)[0]?.result?.state === 'unknown',
    ],
    [
      'a status lookup found the charge',
      results(f, 'reconcileAttempt').some((r) => r?.state === 'succeeded'),
    ],
    ['the job succeeded with attempt 1', wonBy(f, 'succeeded', 1)],
  ],
};

export const SCENARIO_NAMES = Object.keys(PATHS);

/** Scenarios added after the older generations of histories were recorded: current only. */
export const CURRENT_ONLY_SCENARIOS: readonly string[] = [
  'admission-update-slow-admission',
  'webhooks',
  'never-sent-retried',
  'late-window-retried',
];

/**
 * Scenarios only code older than the current took, each with the one generation that holds it.
 * Where they went, a rule has since changed behind a patch: the current code goes elsewhere, so
 * the recorder has no such scenario, and its history can never be recorded again.
 * - retry-takes-last-attempt: recorded before a6f858d, whose rule keeps the cap's room for the
 *   plan's untried providers; before it, a retry on the same provider could take the last attempt.
 */
export const OLDER_CODE_SCENARIOS: Readonly<Record<string, string>> = {
  'retry-takes-last-attempt': 'before-retry-room',
};

/** Scenarios also recorded traced (`npm run replay:record -- --traced`): a start, signals, an update. */
export const TRACED_SCENARIOS: readonly string[] = [
  'happy-path',
  'hedged-reverse-order',
  'unknown-operator-resolve',
];

/** What the history of `scenario` fails to show; empty when it took its path. */
export function pathProblems(scenario: string, history: History): string[] {
  const path = PATHS[scenario];
  if (!path) return [`no path is described for the scenario ${scenario}`];
  return path(factsOf(history))
    .filter(([, holds]) => !holds)
    .map(([what]) => what);
}
