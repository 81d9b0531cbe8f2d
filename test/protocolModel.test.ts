import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  consequencesOnly,
  MODEL_RUNS,
  partsOf,
  PLANTED_MODEL_BUGS,
  SHORT_MODEL_RUNS,
  type PlantedModelBug,
} from '../tools/modelCheck/runs';
import {
  linesChangedBy,
  MODEL_FILE,
  obtainSpin,
  verifyAll,
  type ModelResult,
  type ModelRun,
} from '../tools/modelCheck/spin';
import { codeReferences } from '../tools/modelCheck/trail';
import { ROOT } from './support/harness';
import { byLength } from './support/lengths';

/**
 * model/onejob.pml checked by SPIN inside the test command: every property holds in every run,
 * and each planted mistake is caught with a readable counterexample that goes through the
 * mistake and names the code whose rule it removes; with the asserts at the steps compiled out,
 * what the mistake leads to must catch it too. `npm test` makes the short runs (every property
 * and part of the model, within smaller bounds); ONEJOB_TEST_LENGTH=long makes the runs of
 * `npm run verify:model`. The planted mistakes are the same in both.
 */
const RUNS = byLength({ short: SHORT_MODEL_RUNS, long: MODEL_RUNS });
const BUGS = Object.entries(PLANTED_MODEL_BUGS);
const WITHOUT_STEP_ASSERTS = new Map(BUGS.map(([name, bug]) => [name, consequencesOnly(bug)]));
const MODEL = readFileSync(MODEL_FILE, 'utf8');

let results = new Map<ModelRun, ModelResult>();
/** By planted mistake: the model lines it changes. */
const mistakeLines = new Map<string, number[]>();

beforeAll(async () => {
  // Like nginx and Chromium: installed from Debian's packages when missing, else a loud failure.
  const tools = await obtainSpin((line) => console.log(line));
  // The liveness searches take longest: started first, the two lanes end together.
  const byCost = [...RUNS].sort(
    (a, b) => Number(b.check === 'liveness') - Number(a.check === 'liveness'),
  );
  const planted = BUGS.flatMap(([name, bug]) => [bug, WITHOUT_STEP_ASSERTS.get(name)!]);
  results = await verifyAll([...byCost, ...planted], tools);
  for (const [name, bug] of BUGS) mistakeLines.set(name, await linesChangedBy(name, bug, tools));
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
  const result = results.get(run);
  if (!result) throw new Error(`no result for ${run.name}`);
  return result;
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The model lines of the Invariants monitor: where the consequences are asserted. */
function monitorLines(): { first: number; last: number } {
  const lines = MODEL.split('\n');
  const first = lines.findIndex((line) => line.startsWith('active proctype Invariants'));
  const last = lines.findIndex((line, index) => index > first && line.startsWith('}'));
  return { first: first + 1, last: last + 1 };
}

/**
 * Whether `source` defines `name`: a function, a method, a constant; or, for an HTTP route
 * (`POST /v1/jobs`), registers that route.
 */
function definesName(source: string, name: string): boolean {
  const route = /^(GET|POST|PUT|PATCH|DELETE) \/v1(\/\S*)$/.exec(name);
  if (route)
    return source.includes(`app.${route[1]!.toLowerCase()}(`) && source.includes(`'${route[2]}'`);
  return [
    new RegExp(`^\\s*(?:export\\s+)?(?:async\\s+)?(?:function\\s+)?${name}\\s*[(<]`, 'm'),
    new RegExp(`^\\s*(?:export\\s+)?(?:const|let|class)\\s+${name}\\b`, 'm'),
  ].some((definition) => definition.test(source));
}

/** What a planted mistake's counterexample must show besides the property it breaks. */
function expectThroughTheMistake(bug: string, run: PlantedModelBug, result: ModelResult): void {
  expect(result.counterexample).toMatch(/counterexample: \d+ steps/);
  expect(result.counterexample).toMatch(/JobWorkflow#\d+/);
  // A step on a line the mistake changes, and that step names the code whose rule it removes.
  const lines = mistakeLines.get(bug) ?? [];
  expect(lines.length).toBeGreaterThan(0);
  const through = (result.trail?.steps ?? []).filter((step) => lines.includes(step.line));
  expect(through.map((step) => step.code)).toContain(run.code);
  expect(result.counterexample).toContain(`⟵ ${run.code}`);
}

describe('the job/attempt protocol, model-checked by SPIN', () => {
  test('the short runs have every part of the model the full runs have: each job kind with each check, each optional part, a fallback provider, the operator and the callback', () => {
    const parts = (runs: ModelRun[]): string[] => [...new Set(runs.flatMap(partsOf))].sort();
    expect(parts(SHORT_MODEL_RUNS)).toEqual(parts(MODEL_RUNS));
  });

  test('every code reference in the model names a file of src/ and a function (or route) it defines', () => {
    const wrong = codeReferences(MODEL).filter(({ file, name }) => {
      let source: string;
      try {
        source = readFileSync(path.join(ROOT, file), 'utf8');
      } catch {
        return true;
      }
      return name !== undefined && !definesName(source, name);
    });
    expect(wrong).toEqual([]);
  });

  test.each(RUNS.map((run) => [run.name, run.check, run] as const))(
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

  test.each(BUGS)(
    'planted mistake %s is caught: a counterexample that names the property it breaks, goes through the mistake and names the code whose rule it removes',
    (bug, run) => {
      const result = resultOf(run);
      expect(result.errors).toBeGreaterThan(0);
      expect(result.violation).toMatch(
        new RegExp(`^${escaped(run.breaks)} \\(onejob\\.pml:\\d+\\)$`),
      );
      expectThroughTheMistake(bug, run, result);
    },
  );

  test.each(BUGS)(
    'planted mistake %s is caught by what it leads to, a property of the Invariants monitor, with the asserts at the steps compiled out',
    (bug, run) => {
      const result = resultOf(WITHOUT_STEP_ASSERTS.get(bug)!);
      expect(result.errors).toBeGreaterThan(0);
      const consequence = new RegExp(`^${escaped(run.consequence)} \\(onejob\\.pml:(\\d+)\\)$`);
      expect(result.violation).toMatch(consequence);
      // The line of the assert that failed lies in the monitor, not beside a guard.
      const line = Number(consequence.exec(result.violation ?? '')?.[1]);
      const { first, last } = monitorLines();
      expect(line).toBeGreaterThan(first);
      expect(line).toBeLessThan(last);
      expectThroughTheMistake(bug, run, result);
    },
  );
});
