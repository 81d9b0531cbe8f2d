import fc from 'fast-check';
import { byLength, explorationSeed } from './support/lengths';
import {
  MODEL_CERTIFICATIONS,
  MODEL_STACK,
  STEP_KINDS,
  runScenario,
  scenarioArb,
  scenariosMaking,
  stepCounts,
} from './support/modelBasedRun';
import { useTestStack } from './support/stack';

/**
 * The model-based test: random sequences of the protocol's steps (create, duplicate, mismatched
 * create, try again, a provider answering, failing or timing out, an operator's resolve or
 * cancel, a signed callback) run against the real system, each answer and each settled job
 * checked against the reference model (test/support/protocolModel.ts). Random runs may miss a
 * rare kind of step; for each one they missed, a scenario that makes it (drawn from the same
 * commands, picked by the model alone) runs after them. docs/model-based-test.md says what the
 * commands are and how to replay a seed.
 */
const stack = useTestStack({ ...MODEL_STACK, certify: MODEL_CERTIFICATIONS });

/** Random runs: `npm test` makes 20, `npm run test:long` 100 (ONEJOB_MODEL_RUNS overrides). */
const NUM_RUNS = Number(process.env.ONEJOB_MODEL_RUNS ?? byLength({ short: 20, long: 100 }));
/** Fixed in `npm test`, new each `npm run test:long`; ONEJOB_MODEL_SEED replays one. */
const { seed: SEED, origin: SEED_ORIGIN } = explorationSeed('ONEJOB_MODEL_SEED', 604_382_258);
const PATH = process.env.ONEJOB_MODEL_PATH;
const SCENARIO = { maxCommands: 8 };

const replay = `ONEJOB_MODEL_SEED=${SEED}${PATH ? ` ONEJOB_MODEL_PATH=${PATH}` : ''}`;

async function randomRuns(): Promise<void> {
  try {
    await fc.assert(
      fc.asyncProperty(scenarioArb(SCENARIO), ([first, commands]) =>
        runScenario(stack, first, commands),
      ),
      { seed: SEED, numRuns: NUM_RUNS, endOnFailure: false, ...(PATH ? { path: PATH } : {}) },
    );
  } catch (error) {
    // fast-check's report names the seed, the path and the shrunk sequence of commands.
    console.log(
      `model-based test FAILED (seed ${SEED}); replay with ${replay} and the path below:\n${(error as Error).message}`,
    );
    throw error;
  }
}

/** For each kind of step the random runs did not make, a scenario that makes it; how many ran. */
async function missingKinds(): Promise<number> {
  const missing = STEP_KINDS.filter((kind) => !stepCounts.has(kind));
  const scenarios = scenariosMaking(missing, SEED, SCENARIO);
  for (const [first, commands] of scenarios) {
    const steps = [first, ...commands].map(String).join(', ');
    try {
      await runScenario(stack, first, commands);
    } catch (error) {
      console.log(
        `model-based test FAILED in a scenario for a missing kind of step (seed ${SEED}; replay with ${replay}):\n${steps}`,
      );
      throw error;
    }
  }
  return scenarios.length;
}

test(
  'every sequence of protocol steps gets the answers the model predicts and leaves one job with at most one winning attempt, an unknown attempt never failed by a clock and a late result never recorded over the winner; every kind of step (each command with each answer, each thing a provider does) runs at least once',
  async () => {
    console.log(
      `model-based test: seed ${SEED} (${SEED_ORIGIN}), ${NUM_RUNS} runs (replay: ${replay})`,
    );
    await randomRuns();
    const extra = await missingKinds();
    // What the runs did, so a reader can see that every kind of step (and answer) happened.
    console.log(
      `model-based test: ${NUM_RUNS} runs and ${extra} for the kinds of step they missed passed; steps run: ${[
        ...stepCounts,
      ]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([kind, n]) => `${kind} ×${n}`)
        .join(', ')}`,
    );
    expect(STEP_KINDS.filter((kind) => !stepCounts.has(kind))).toEqual([]);
  },
  30 * 60_000,
);
