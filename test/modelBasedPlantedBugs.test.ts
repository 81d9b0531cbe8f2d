import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { buildWithPlantedBug, PLANTED_BUGS, type PlantedBug } from '../src/chaos/plantedBugs';
import { TEST_OUTPUT } from './harness';
import {
  MODEL_CERTIFICATIONS,
  MODEL_STACK,
  runScenario,
  scenarioArb,
} from './support/modelBasedRun';
import { startTestStack } from './support/stack';

/**
 * The model-based test can find what it looks for: each planted bug (src/chaos/plantedBugs.ts)
 * goes into a throwaway copy of the compiled service, the stack runs that copy's API and worker
 * processes on a database migrated with the copy's migrations, and the same property as
 * test/modelBased.test.ts must fail, with the seed that replays it. A planted bug whose code can
 * no longer be found fails here too (buildWithPlantedBug throws).
 */
const CASES: Array<[PlantedBug, number]> = [
  // A late result overwrites the winner (or a cancelled job's ending).
  ['cas-without-guard', 9101],
  // A charge call that ended ambiguously counts as failed: the fallback runs.
  ['unknown-as-failed', 9102],
  // An exclusive job goes on past its unknown attempt.
  ['exclusive-ignores-unknown', 9103],
];

test('every planted bug the model-based test must catch has a case here', () => {
  const ours = Object.entries(PLANTED_BUGS)
    .filter(([, bug]) => (bug.caughtBy as readonly string[]).includes('model-based'))
    .map(([name]) => name);
  expect(CASES.map(([bug]) => bug).sort()).toEqual(ours.sort());
});

test.each(CASES)(
  'the model-based property fails against a build with the planted bug %s (seed %i), naming its counterexample',
  async (bug, seed) => {
    const dir = mkdtempSync(path.join(TEST_OUTPUT, `model-${bug}-`));
    const build = buildWithPlantedBug(bug, path.join(dir, 'build'));
    const stack = await startTestStack({ ...MODEL_STACK, build });
    try {
      for (const [provider, jobType] of MODEL_CERTIFICATIONS)
        expect((await stack.certify(provider, jobType)).passed).toBe(true);
      const details = await fc.check(
        fc.asyncProperty(scenarioArb({ maxCommands: 8 }), ([first, commands]) =>
          runScenario(stack, first, commands),
        ),
        // The first failure is enough here; the main test shrinks.
        { seed, numRuns: 60, endOnFailure: true },
      );
      console.log(
        details.failed
          ? `planted bug ${bug}: caught after ${details.numRuns} run(s), seed ${details.seed}, path ${details.counterexamplePath}\ncounterexample: ${fc.stringify(details.counterexample)}\n${(details.errorInstance as Error).message}`
          : `planted bug ${bug}: NOT caught in ${details.numRuns} runs (seed ${details.seed})`,
      );
      expect(details.failed).toBe(true);
      expect(details.seed).toBe(seed);
    } finally {
      await stack.stop();
    }
  },
  15 * 60_000,
);
