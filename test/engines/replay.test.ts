import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { tracingWorkerOptions } from '../../src/telemetry/temporalTracing';
import { LOCAL_ADMISSION } from '../../src/workflows/activityStubs';
import { COMPLETION_WEBHOOKS, OWN_WINDOW, RETRY_LEAVES_ROOM } from '../../src/workflows/patches';
import { carriesTrace } from '../../src/workflows/traceHeader';
import {
  CURRENT_ONLY_SCENARIOS,
  factsOf,
  OLDER_CODE_SCENARIOS,
  pathProblems,
  SCENARIO_NAMES,
  tookPatch,
  TRACED_SCENARIOS,
} from '../replay/paths';
import { harness } from '../support/harness';

/**
 * Every recorded history must replay against the current workflow code: a change that would
 * break running jobs fails here. These generations are kept, each with every scenario:
 * - test/replay/histories: recorded by the current code (`npm run replay:record`), whose
 *   runs start in patch epoch 2 (workflows/patchEpochs.ts), so they write no patch marker, and
 *   whose ending asks for webhook events only when the owner had an endpoint at admission;
 * - test/replay/histories/before-epochs: recorded by the code just before epochs, each patch
 *   asked and marked, every ending asking for its webhook events; its admission, like the
 *   current one, is a local activity that also writes attempt 1's row;
 * - test/replay/histories/local-admission: recorded when local admission wrote no attempt, so
 *   attempt 1 had a `startAttempt` activity task like every later one;
 * - test/replay/histories/remote-admission: recorded before the local-admission patch, when
 *   admission was an activity task of its own.
 * Jobs that began in an older generation may still be running. Beside them,
 * test/replay/histories/traced holds runs of the current code started by a traced request
 * (`npm run replay:record -- --traced`): their start carries a trace, so the workflow's
 * tracing interceptors ran in them, and must replay the same (workflows/tracing.ts).
 * test/replay/histories/before-retry-room holds a run recorded just before a6f858d, whose retry
 * on the same provider took the last attempt the job's cap allowed while its fallback was still
 * untried: the current rule would have moved to the fallback, and asks the patch
 * retry-leaves-room-for-fallbacks there (workflows/patchEpochs.ts retryRulesOf), which this run
 * never marked. It holds only that scenario (paths.ts OLDER_CODE_SCENARIOS).
 */
const HISTORIES_DIR = path.join(__dirname, '..', 'replay', 'histories');
const GENERATIONS = {
  current: HISTORIES_DIR,
  'before-epochs': path.join(HISTORIES_DIR, 'before-epochs'),
  'before-webhooks': path.join(HISTORIES_DIR, 'before-webhooks'),
  'local-admission': path.join(HISTORIES_DIR, 'local-admission'),
  'remote-admission': path.join(HISTORIES_DIR, 'remote-admission'),
  traced: path.join(HISTORIES_DIR, 'traced'),
  'before-retry-room': path.join(HISTORIES_DIR, 'before-retry-room'),
} as const;
type Generation = keyof typeof GENERATIONS;

/** The scenarios the current code still takes: those the recorder knows. */
const LIVE_SCENARIOS = SCENARIO_NAMES.filter((name) => OLDER_CODE_SCENARIOS[name] === undefined);
/** What the admission generations were recorded for: every scenario older than them. */
const BEFORE_CURRENT_ONLY = LIVE_SCENARIOS.filter((name) => !CURRENT_ONLY_SCENARIOS.includes(name));
/** The scenarios each generation was recorded for: each must have its history there, no other. */
const RECORDED_FOR: Record<Generation, readonly string[]> = {
  current: LIVE_SCENARIOS,
  'before-epochs': LIVE_SCENARIOS,
  'before-webhooks': [...BEFORE_CURRENT_ONLY, 'admission-update-slow-admission'],
  'local-admission': BEFORE_CURRENT_ONLY,
  'remote-admission': BEFORE_CURRENT_ONLY,
  traced: TRACED_SCENARIOS,
  'before-retry-room': Object.keys(OLDER_CODE_SCENARIOS).filter(
    (name) => OLDER_CODE_SCENARIOS[name] === 'before-retry-room',
  ),
};

const histories = Object.entries(GENERATIONS).flatMap(([generation, dir]) =>
  readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => ({
      generation: generation as Generation,
      name: file.replace(/\.json$/, ''),
      history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, file), 'utf8'))),
    })),
);
const cases = histories.map((h) => [h.generation, h.name, h.history] as const);

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed by an earlier file
  }
});

test.each(Object.keys(GENERATIONS) as Generation[])(
  'there is a %s history for every scenario it was recorded for',
  (generation) => {
    expect(
      histories
        .filter((h) => h.generation === generation)
        .map((h) => h.name)
        .sort(),
    ).toEqual([...RECORDED_FOR[generation]].sort());
  },
);

test('every scenario has its history in some generation; one only older code took, in its own', () => {
  const recorded = new Set(Object.values(RECORDED_FOR).flat());
  expect(SCENARIO_NAMES.filter((name) => !recorded.has(name))).toEqual([]);
  for (const [name, generation] of Object.entries(OLDER_CODE_SCENARIOS)) {
    expect(Object.keys(GENERATIONS)).toContain(generation);
    expect(RECORDED_FOR.current).not.toContain(name);
  }
});

test.each(cases)('the %s %s history took the path its name says', (_generation, name, history) => {
  expect(pathProblems(name, history)).toEqual([]);
});

test.each(cases)(
  'the %s %s history admitted its job the way its generation says',
  (generation, _name, history) => {
    const facts = factsOf(history);
    const remote = facts.activities.map((a) => a.type);
    const local = facts.localActivities.map((a) => a.type);
    // A run continued as new was admitted by its first run: it carries the plan.
    const admits = facts.input?.carried === undefined;
    if (generation !== 'remote-admission') {
      expect(tookPatch(facts, LOCAL_ADMISSION)).toBe(true);
      expect(local.filter((type) => type === 'admitJob')).toEqual(admits ? ['admitJob'] : []);
      if (admits) expect(local[0]).toBe('admitJob');
      expect(remote).not.toContain('admitJob');
      // Which admission wrote attempt 1: recorded in its result, which replay follows.
      const admission = facts.localActivities[0]?.result;
      if (admission && admission.terminalStatus === null) {
        // Every generation since admission wrote attempt 1.
        const current = generation !== 'local-admission';
        expect(admission.firstAttempt !== undefined).toBe(current);
        const startedFirst = facts.activities.some(
          (a) => a.type === 'startAttempt' && a.input?.seq === 1,
        );
        expect(startedFirst).toBe(!current);
      }
    } else {
      expect(facts.patches).toEqual([]);
      expect(local).toEqual([]);
      expect(remote.filter((type) => type === 'admitJob')).toEqual(admits ? ['admitJob'] : []);
    }
  },
);

/** The generations recorded since completion webhooks: their endings hand events to senders. */
const WITH_WEBHOOKS: readonly Generation[] = ['current', 'before-epochs'];

test.each(cases)(
  'only the generations since webhooks hand a job’s events to webhook senders: the %s %s history',
  (generation, _name, history) => {
    const facts = factsOf(history);
    const handsOver = facts.localActivities.some((a) => a.type === 'webhookEventsWaiting');
    if (!WITH_WEBHOOKS.includes(generation)) {
      expect(facts.patches).not.toContain(COMPLETION_WEBHOOKS);
      expect(handsOver).toBe(false);
    } else if (facts.closed === 'completed' || facts.closed === 'canceled') {
      // A run that ended its job took the patch; it asks which of its events wait unless its
      // owner had no endpoint at admission (asked of every ending before epochs).
      expect(tookPatch(facts, COMPLETION_WEBHOOKS)).toBe(true);
      const admission = facts.localActivities.find((a) => a.type === 'admitJob')?.result;
      const carried = facts.input?.carried as { plan?: Record<string, unknown> } | undefined;
      const admittedWithout = (admission ?? carried?.plan)?.ownerHasWebhooks === false;
      expect(handsOver).toBe(!admittedWithout);
      if (generation === 'before-epochs') expect(admittedWithout).toBe(false);
    }
  },
);

test.each(cases)(
  'a run begun in a patch epoch writes no patch marker: the %s %s history',
  (generation, _name, history) => {
    const facts = factsOf(history);
    const epoch = facts.input?.patchEpoch;
    expect(epoch).toBe(generation === 'current' ? 2 : undefined);
    if (epoch !== undefined) {
      expect(facts.patches).toEqual([]);
      const upserts = (history.events ?? []).flatMap((event) =>
        Object.keys(
          event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ??
            {},
        ),
      );
      expect(upserts).not.toContain('TemporalChangeVersion');
    }
  },
);

test('the before-retry-room history made its retry by the rule before the patch, unmarked', () => {
  const older = histories.filter((h) => h.generation === 'before-retry-room');
  expect(older).not.toEqual([]);
  for (const { history } of older)
    expect(factsOf(history).patches).not.toContain(RETRY_LEAVES_ROOM);
});

test('a history that took another path than its name says is refused', () => {
  const failover = histories.find((h) => h.name === 'definite-failure-then-fallback')!;
  expect(pathProblems('happy-path', failover.history)).toEqual([
    'one provider call',
    'the job succeeded with attempt 1',
  ]);
  const lateSuccess = histories.find((h) => h.name === 'timeout-unknown-late-success')!;
  expect(pathProblems('status-lookup-success', lateSuccess.history)).toEqual([
    'the only call ended unknown',
  ]);
});

test.each(cases)(
  'only the traced generation was started by a traced request: the %s %s history',
  (generation, _name, history) => {
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(carriesTrace(started?.header?.fields ?? undefined)).toBe(generation === 'traced');
  },
);

test.each(cases)(
  'the %s %s history replays against the current workflow code, with its tracing interceptors',
  async (generation, name, history) => {
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: harness().workflowBundlePath },
        // As a worker registers it (what the sandbox's spans go to; nothing during a replay).
        sinks: tracingWorkerOptions(undefined).sinks,
      },
      history,
      `replay-${generation}-${name}`,
    );
  },
);

test('a deliberately non-deterministic change is caught by replay', async () => {
  const changed = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, '..', 'replay', 'changedWorkflow.ts'),
    logger: new DefaultLogger('WARN'),
  });
  const happy = histories.find((h) => h.name === 'happy-path')!;
  await expect(
    Worker.runReplayHistory({ workflowBundle: changed }, happy.history, 'replay-changed'),
  ).rejects.toBeInstanceOf(DeterminismViolationError);
});

/**
 * Webhook sender histories (test/replay/senders), each of a sender that gave up on an event
 * while a redelivery of it to another endpoint waited (the scenario of
 * test/webhookRedeliveryWindow.test.ts, recorded with its history saved): `gave-up` by the code
 * before the delivery-own-window patch, which ended everything that waited;
 * `gave-up-own-window` by the code after, which ended only what was written before it began and
 * continued as new for the redelivery.
 */
const SENDER_HISTORIES = path.join(__dirname, '..', 'replay', 'senders');
const senders = readdirSync(SENDER_HISTORIES)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({
    name: file.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(readFileSync(path.join(SENDER_HISTORIES, file), 'utf8'))),
  }));

test('the sender histories are the two sides of the delivery-own-window patch, the newest taking it by its epoch', () => {
  const facts = Object.fromEntries(
    senders.map(({ name, history }) => {
      const { patches, activities, input } = factsOf(history);
      return [
        name,
        {
          marked: patches.includes(OWN_WINDOW),
          epoch: input?.patchEpoch,
          gaveUpWith: activities.map((a) => a.type).filter((type) => type.startsWith('giveUp')),
          continuedAsNew: (history.events ?? []).some(
            (event) => event.workflowExecutionContinuedAsNewEventAttributes,
          ),
        },
      ];
    }),
  );
  expect(facts).toEqual({
    'gave-up': {
      marked: false,
      epoch: undefined,
      gaveUpWith: ['giveUpWebhooks'],
      continuedAsNew: false,
    },
    'gave-up-own-window': {
      marked: true,
      epoch: undefined,
      gaveUpWith: ['giveUpEarlierWebhooks'],
      continuedAsNew: true,
    },
    // Begun in epoch 2: the patch settled, no marker at all.
    'gave-up-in-epoch': {
      marked: false,
      epoch: 2,
      gaveUpWith: ['giveUpEarlierWebhooks'],
      continuedAsNew: true,
    },
  });
  const inEpoch = senders.find(({ name }) => name === 'gave-up-in-epoch')!;
  expect(factsOf(inEpoch.history).patches).toEqual([]);
});

test.each(senders.map(({ name, history }) => [name, history] as const))(
  'the webhook sender history %s replays against the current workflow code',
  async (name, history) => {
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: harness().workflowBundlePath } },
      history,
      `replay-sender-${name}`,
    );
  },
);
