import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { buildWithPlantedBug, PLANTED_BUGS, type PlantedBug } from '../tools/chaos/plantedBugs';
import { TEST_OUTPUT } from './support/harness';
import {
  MODEL_CERTIFICATIONS,
  MODEL_STACK,
  RunFailure,
  runScenario,
  scenarioArb,
  type Divergence,
} from './support/modelBasedRun';
import { certifyForSetup, startTestStack } from './support/stack';

/**
 * The model-based test can find what it looks for: each planted bug (tools/chaos/plantedBugs.ts)
 * goes into a throwaway copy of the compiled service, the stack runs that copy's API and worker
 * processes on a database migrated with the copy's migrations, and the same property as
 * test/modelBased.test.ts must fail, with the seed that replays it, by the divergence the bug
 * makes: not a timeout (the settle ceiling), not a request or a process that failed. A planted
 * bug whose code can no longer be found fails here too (buildWithPlantedBug throws).
 */
interface Case {
  bug: PlantedBug;
  seed: number;
  /** What the bug must make the real system do, in words. */
  makes: string;
  /** Whether a divergence is that. */
  isIt: (divergence: Divergence) => boolean;
}

/** Another attempt than `seq` the real system shows unknown. */
const otherUnknown = (d: Divergence): boolean =>
  (d.real?.attempts ?? []).some((a) => a.seq !== d.seq && a.state === 'unknown');

const CASES: Case[] = [
  {
    bug: 'cas-without-guard',
    seed: 9212,
    makes:
      'an outcome written over: a result that must lose wins, or an ended job becomes succeeded',
    isIt: (d) =>
      (d.kind === 'attempt-state' && d.seen === 'succeeded' && d.expected === 'lost') ||
      d.kind === 'winner' ||
      (d.kind === 'job-ended' && d.seen === 'succeeded'),
  },
  {
    bug: 'unknown-as-failed',
    seed: 9102,
    makes:
      'an attempt failed where it may have charged: the model has it unknown (or settled by its charge)',
    isIt: (d) =>
      d.kind === 'attempt-state' &&
      d.seen === 'failed' &&
      ['unknown', 'succeeded', 'lost'].includes(d.expected ?? ''),
  },
  {
    bug: 'exclusive-ignores-unknown',
    seed: 9103,
    makes: 'an exclusive job starts another attempt, or ends, while one is unknown',
    isIt: (d) =>
      (d.kind === 'extra-attempt' || (d.kind === 'job-ended' && d.seen === 'failed')) &&
      otherUnknown(d),
  },
];

/** What the search against one planted bug found: whether the property failed, and why. */
interface Search {
  failed: boolean;
  error: unknown;
}

/** The property of test/modelBased.test.ts against a build with `bug`, until its first failure. */
async function search(bug: PlantedBug, seed: number): Promise<Search> {
  const started = Date.now();
  const dir = mkdtempSync(path.join(TEST_OUTPUT, `model-${bug}-`));
  const build = buildWithPlantedBug(bug, path.join(dir, 'build'));
  const stack = await startTestStack({ ...MODEL_STACK, build });
  try {
    await certifyForSetup(stack, MODEL_CERTIFICATIONS);
    const details = await fc.check(
      fc.asyncProperty(scenarioArb({ maxCommands: 8 }), ([first, commands]) =>
        runScenario(stack, first, commands),
      ),
      // The first failure is enough here; the main test shrinks.
      { seed, numRuns: 60, endOnFailure: true },
    );
    console.log(
      details.failed
        ? `planted bug ${bug}: caught after ${details.numRuns} run(s) in ${Math.round((Date.now() - started) / 1000)} s, seed ${details.seed}, path ${details.counterexamplePath}\ncounterexample: ${fc.stringify(details.counterexample)}\n${(details.errorInstance as Error).message}`
        : `planted bug ${bug}: NOT caught in ${details.numRuns} runs (seed ${details.seed})`,
    );
    return { failed: details.failed, error: details.errorInstance };
  } finally {
    await stack.stop();
  }
}

const searches = new Map<PlantedBug, PromiseSettledResult<Search>>();

// The three searches at once, each on its own stack (most of a run is waiting on the system):
// done before any test, so that no test's end clears the faults of a search still running.
beforeAll(async () => {
  const settled = await Promise.allSettled(CASES.map(({ bug, seed }) => search(bug, seed)));
  CASES.forEach(({ bug }, index) => searches.set(bug, settled[index]!));
}, 15 * 60_000);

test('every planted bug the model-based test must catch has a case here', () => {
  const ours = Object.entries(PLANTED_BUGS)
    .filter(([, bug]) => (bug.caughtBy as readonly string[]).includes('model-based'))
    .map(([name]) => name);
  expect(CASES.map(({ bug }) => bug).sort()).toEqual(ours.sort());
});

test.each(CASES.map((c) => [c.bug, c.seed, c.makes, c] as const))(
  'the model-based property fails against a build with the planted bug %s (seed %i) by the divergence it makes: %s',
  (bug, _seed, _makes, { isIt }) => {
    const searched = searches.get(bug);
    if (searched?.status !== 'fulfilled') throw searched?.reason ?? new Error('not searched');
    expect(searched.value.failed).toBe(true);
    // A divergence from the model, not the ceiling or a failure of the stack.
    const failure = searched.value.error;
    expect(failure).toBeInstanceOf(RunFailure);
    const { kind, divergence } = failure as RunFailure;
    expect(kind).toBe('divergence');
    // The divergence this bug makes (shown whole when it is another).
    expect({ divergence, isIt: divergence !== undefined && isIt(divergence) }).toEqual({
      divergence,
      isIt: true,
    });
  },
);
