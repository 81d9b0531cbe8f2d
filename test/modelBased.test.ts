import fc from 'fast-check';
import {
  MODEL_CERTIFICATIONS,
  MODEL_STACK,
  runScenario,
  scenarioArb,
  stepCounts,
} from './support/modelBasedRun';
import { useTestStack } from './support/stack';

/**
 * The model-based test: random sequences of the protocol's steps (create, duplicate, mismatched
 * create, try again, a provider answering, failing or timing out, an operator's resolve or
 * cancel, a signed callback) run against the real system, each answer and each settled job
 * checked against the reference model (test/support/protocolModel.ts). docs/model-based-test.md
 * says what the commands are and how to replay a seed.
 */
const stack = useTestStack({ ...MODEL_STACK, certify: MODEL_CERTIFICATIONS });

const NUM_RUNS = Number(process.env.ONEJOB_MODEL_RUNS ?? 100);
const SEED = process.env.ONEJOB_MODEL_SEED
  ? Number(process.env.ONEJOB_MODEL_SEED)
  : Math.floor(Math.random() * 2 ** 31);
const PATH = process.env.ONEJOB_MODEL_PATH;

test(
  'every sequence of protocol steps gets the answers the model predicts and leaves one job with at most one winning attempt, an unknown attempt never failed by a clock and a late result never recorded over the winner',
  async () => {
    console.log(
      `model-based test: seed ${SEED}, ${NUM_RUNS} runs (replay: ONEJOB_MODEL_SEED=${SEED}${PATH ? ` ONEJOB_MODEL_PATH=${PATH}` : ''})`,
    );
    try {
      await fc.assert(
        fc.asyncProperty(scenarioArb({ maxCommands: 8 }), ([first, commands]) =>
          runScenario(stack, first, commands),
        ),
        { seed: SEED, numRuns: NUM_RUNS, endOnFailure: false, ...(PATH ? { path: PATH } : {}) },
      );
    } catch (error) {
      // fast-check's report names the seed, the path and the shrunk sequence of commands.
      console.log(
        `model-based test FAILED (seed ${SEED}); replay with ONEJOB_MODEL_SEED=${SEED} and the path below:\n${(error as Error).message}`,
      );
      throw error;
    }
    // What the runs did, so a reader can see that every kind of step (and answer) happened.
    console.log(
      `model-based test: ${NUM_RUNS} runs passed; steps run: ${[...stepCounts]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([kind, n]) => `${kind} ×${n}`)
        .join(', ')}`,
    );
  },
  30 * 60_000,
);
