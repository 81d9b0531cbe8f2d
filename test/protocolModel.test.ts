import { MODEL_RUNS, PLANTED_MODEL_BUGS } from '../src/modelCheck/runs';
import { obtainSpin, verifyModel, type ModelResult, type ModelRun } from '../src/modelCheck/spin';

/**
 * model/onejob.pml checked by SPIN inside the test command (the same runs as
 * `npm run verify:model`): every property holds in every run, and each planted mistake is
 * caught with a readable counterexample that names the code of its steps.
 */
let tools: { spin: string; cc: string };
const results = new Map<string, ModelResult>();

/** Runs the searches two at a time: the machine has two cores, and the suite runs in band. */
async function verifyAll(runs: ModelRun[]): Promise<void> {
  const queue = [...runs];
  const lane = async (): Promise<void> => {
    for (let run = queue.shift(); run; run = queue.shift())
      results.set(run.name, await verifyModel(run, tools));
  };
  await Promise.all([lane(), lane()]);
}

beforeAll(async () => {
  // Like nginx and Chromium: installed from Debian's packages when missing, else a loud failure.
  tools = await obtainSpin((line) => console.log(line));
  // The liveness searches take longest: started first, the two lanes end together.
  const byCost = [...MODEL_RUNS].sort(
    (a, b) => Number(b.check === 'liveness') - Number(a.check === 'liveness'),
  );
  await verifyAll([...byCost, ...Object.values(PLANTED_MODEL_BUGS)]);
  console.log(
    [...results.values()]
      .map(
        (r) =>
          `${r.run.name} (${r.run.check}): ${r.states.toLocaleString('en-US')} states, ${r.seconds} s, ${r.errors} errors`,
      )
      .join('\n'),
  );
}, 1_800_000);

function resultOf(run: ModelRun): ModelResult {
  const result = results.get(run.name);
  if (!result) throw new Error(`no result for ${run.name}`);
  return result;
}

describe('the job/attempt protocol, model-checked by SPIN', () => {
  test.each(MODEL_RUNS.map((run) => [run.name, run.check, run] as const))(
    'every property holds in every interleaving of the model: %s (%s)',
    (_name, _check, run) => {
      const result = resultOf(run);
      // A search that explored almost nothing would prove nothing.
      expect(result.states).toBeGreaterThan(100_000);
      expect({ violation: result.violation, counterexample: result.counterexample }).toEqual({
        violation: undefined,
        counterexample: undefined,
      });
      expect(result.errors).toBe(0);
    },
  );

  test.each(Object.entries(PLANTED_MODEL_BUGS))(
    'a planted mistake is caught with a counterexample that names the property and the code: %s',
    (_bug, run) => {
      const result = resultOf(run);
      expect(result.errors).toBeGreaterThan(0);
      // The property it breaks, in the model's words, with its line.
      expect(result.violation).toContain(run.breaks);
      expect(result.violation).toMatch(/onejob\.pml:\d+\)$/);
      // The trail is steps of named processes, and names the code that implements them.
      expect(result.counterexample).toMatch(/counterexample: \d+ steps/);
      expect(result.counterexample).toMatch(/JobWorkflow#\d+/);
      expect(result.counterexample).toMatch(/src\/\w+\/\w+\.ts/);
    },
  );
});
