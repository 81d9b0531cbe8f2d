/**
 * Turns SPIN's replay of a counterexample (`spin -t -p -g -l`) into steps a reader can follow:
 * one line per step of one process, with what it did, the values it changed, and the code in
 * onejob that implements that step (the nearest `src/…` reference above it in the model).
 */

/** One step of one process in a counterexample, with the code that implements it. */
export interface TrailStep {
  step: number;
  process: string;
  /** The model line SPIN names for the step. */
  line: number;
  actions: string[];
  changes: Map<string, string>;
  /** `src/<file>.ts <function>` (or `src/<file>.ts <METHOD> <path>`), when the model names one. */
  code?: string;
}

/** A counterexample as steps, and SPIN's last words about it (the assert, the cycle). */
export interface Trail {
  steps: TrailStep[];
  ending: string[];
}

/** What SPIN prints for steps that decide nothing: a branch taken, a bare `skip`. */
const NOISE = new Set(['(1)', 'else', 'skip', 'break', '.(goto)', 'goto :b0', 'goto :b1']);

/** A code reference: a `src/….ts` file, then a function or an HTTP route when one follows. */
const REFERENCE =
  /(src\/[\w/.-]+\.ts)(?:\s+((?:GET|POST|PUT|PATCH|DELETE)(?: \/:?[\w.-]+)(?:\/:?[\w.-]+)*|[A-Za-z_]\w*))?/;

/** A `src/….ts` file named on one model line, with the function after it when there is one. */
function referenceOn(text: string | undefined): string | undefined {
  const found = REFERENCE.exec(text ?? '');
  if (!found) return undefined;
  return found[2] ? `${found[1]} ${found[2]}` : found[1];
}

/** The `src/…` reference nearest above a model line, within the comment blocks before it. */
function codeReference(modelLines: string[], line: number): string | undefined {
  for (let index = Math.min(line, modelLines.length) - 1; index >= 0; index -= 1) {
    const found = referenceOn(modelLines[index]);
    if (found) return found;
    if (/^(proctype|active proctype|inline|init)\b/.test(modelLines[index] ?? '')) {
      // Look just above the definition for its comment, then stop.
      for (let above = index - 1; above >= Math.max(0, index - 12); above -= 1) {
        const header = referenceOn(modelLines[above]);
        if (header) return header;
      }
      return undefined;
    }
  }
  return undefined;
}

/** Every code reference the model makes, with its line: each must name code that exists. */
export function codeReferences(
  model: string,
): Array<{ line: number; file: string; name?: string }> {
  return model.split('\n').flatMap((text, index) =>
    [...text.matchAll(new RegExp(REFERENCE, 'g'))].map((found) => ({
      line: index + 1,
      file: found[1]!,
      ...(found[2] ? { name: found[2] } : {}),
    })),
  );
}

/** SPIN's replay as steps: one per step of one process, values it changed, its code. */
export function parseTrail(replay: string, model: string): Trail {
  const modelLines = model.split('\n');
  const steps: TrailStep[] = [];
  let current: TrailStep | undefined;
  const ending: string[] = [];
  const known = new Map<string, string>();
  for (const raw of replay.split('\n')) {
    const move =
      /^\s*(\d+):\s+proc\s+(\d+)\s+\(([^)]+)\)\s+\S+?:(\d+)\s+\(state \d+\)\s+\[(.*)\]\s*$/.exec(
        raw,
      );
    if (move) {
      const [, stepText, pid, name, lineText, action] = move;
      const process = `${(name ?? '').replace(/:\d+$/, '')}#${pid}`;
      const step = Number(stepText);
      const line = Number(lineText);
      if (!current || current.step !== step || current.process !== process) {
        const code = codeReference(modelLines, line);
        current = {
          step,
          process,
          line,
          actions: [],
          changes: new Map(),
          ...(code ? { code } : {}),
        };
        steps.push(current);
      }
      if (action && !NOISE.has(action)) current.actions.push(action);
      continue;
    }
    const value = /^\t\t(\S+) = (.*)$/.exec(raw);
    if (value && current) {
      // SPIN repeats values it printed before; keep only real changes.
      const [, name = '', now = ''] = value;
      const before = known.get(name) ?? '0';
      if (before !== now) current.changes.set(name, now);
      known.set(name, now);
      continue;
    }
    if (
      /assertion violated|acceptance cycle|invalid end state|START OF CYCLE|spin: trail ends/.test(
        raw,
      )
    )
      ending.push(raw.trim());
  }
  return { steps: steps.filter((s) => s.actions.length > 0), ending: [...new Set(ending)] };
}

/** The counterexample as a reader follows it: a numbered line per step, what it changed. */
export function readableTrail(trail: Trail): string {
  const lastReference = new Map<string, string | undefined>();
  const out: string[] = [`counterexample: ${trail.steps.length} steps`];
  let number = 0;
  for (const step of trail.steps) {
    number += 1;
    const changed = [...step.changes.entries()]
      .filter(([name]) => !name.startsWith('queue'))
      .map(([name, v]) => `${name}=${v}`);
    const where = `onejob.pml:${step.line}`;
    // The code is named where it changes, so a run of steps in one function reads as one.
    const code =
      step.code && lastReference.get(step.process) !== step.code ? `   ⟵ ${step.code}` : '';
    lastReference.set(step.process, step.code);
    out.push(
      `${String(number).padStart(4)}. ${step.process.padEnd(16)} ${where.padEnd(15)} ${step.actions.join('; ')}${code}`,
    );
    if (changed.length > 0) out.push(`${' '.repeat(39)}→ ${changed.join(', ')}`);
  }
  if (trail.ending.length > 0) out.push(...trail.ending.map((line) => `  ${line}`));
  return out.join('\n');
}

/**
 * The property a counterexample breaks, in the model's own words: the `property:` comment
 * above the assert that failed, or what an invalid end state or an acceptance cycle means here.
 */
export function violatedProperty(said: string, replay: string, model: string): string {
  if (/acceptance cycle/.test(said))
    return 'liveness: a started job runs for ever without ending or waiting on an operator';
  if (/invalid end state/.test(said))
    return 'a process is stuck where it may not stop (not ended, not waiting on an operator)';
  const line = Number(/spin: \S+?:(\d+), Error: assertion violated/.exec(replay)?.[1]);
  // Every assert's failure is replayed to its line; a replay that names none was cut short,
  // and its output is what explains why.
  if (/assertion violated/.test(said) && !(line >= 1))
    throw new Error(
      `the replay of the counterexample (${said}) names no assert's line; its output ends:\n${replay.slice(-3_000)}`,
    );
  const modelLines = model.split('\n');
  for (let index = line - 2; index >= Math.max(0, line - 4); index -= 1) {
    const named = /property: (.*?)\s*\*\//.exec(modelLines[index] ?? '');
    if (named?.[1]) return `${named[1]} (onejob.pml:${line})`;
  }
  return said;
}
