/**
 * Turns SPIN's replay of a counterexample (`spin -t -p -g -l`) into steps a reader can follow:
 * one line per step of one process, with what it did, the values it changed, and the code in
 * onejob that implements that step (the nearest `src/…` reference above it in the model).
 */

interface Step {
  step: number;
  process: string;
  line: number;
  actions: string[];
  changes: Map<string, string>;
}

/** What SPIN prints for steps that decide nothing: a branch taken, a bare `skip`. */
const NOISE = new Set(['(1)', 'else', 'skip', 'break', '.(goto)', 'goto :b0', 'goto :b1']);

/** A `src/….ts` file named on one model line, with the function after it when there is one. */
function referenceOn(text: string | undefined): string | undefined {
  const found = /(src\/[\w/.-]+\.ts)(?:\s+([A-Za-z_][\w]*))?/.exec(text ?? '');
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

export function readableTrail(replay: string, model: string): string {
  const modelLines = model.split('\n');
  const steps: Step[] = [];
  let current: Step | undefined;
  let ending: string[] = [];
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
        current = { step, process, line, actions: [], changes: new Map() };
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
  ending = [...new Set(ending)];

  const shown = steps.filter((s) => s.actions.length > 0);
  const lastReference = new Map<string, string | undefined>();
  const out: string[] = [`counterexample: ${shown.length} steps`];
  let number = 0;
  for (const step of shown) {
    number += 1;
    const reference = codeReference(modelLines, step.line);
    const changed = [...step.changes.entries()]
      .filter(([name]) => !name.startsWith('queue'))
      .map(([name, v]) => `${name}=${v}`);
    const where = `onejob.pml:${step.line}`;
    const code =
      reference && lastReference.get(step.process) !== reference ? `   ⟵ ${reference}` : '';
    lastReference.set(step.process, reference);
    out.push(
      `${String(number).padStart(4)}. ${step.process.padEnd(16)} ${where.padEnd(15)} ${step.actions.join('; ')}${code}`,
    );
    if (changed.length > 0) out.push(`${' '.repeat(39)}→ ${changed.join(', ')}`);
  }
  if (ending.length > 0) out.push(...ending.map((line) => `  ${line}`));
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
  const modelLines = model.split('\n');
  for (let index = line - 2; index >= Math.max(0, line - 4); index -= 1) {
    const named = /property: (.*?)\s*\*\//.exec(modelLines[index] ?? '');
    if (named?.[1]) return `${named[1]} (onejob.pml:${line})`;
  }
  return said;
}
