import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { obtainDebianProgram, type DebianProgram } from '../stack/debianPackages';
import { onejobCacheDir } from '../stack/goInstall';
import { parseTrail, readableTrail, violatedProperty, type Trail } from './trail';

const ROOT = PACKAGE_ROOT;
export const MODEL_FILE = path.join(ROOT, 'model', 'onejob.pml');

export const SPIN: DebianProgram = {
  path: '/usr/bin/spin',
  packages: ['spin'],
  overrideEnv: 'SPIN_PATH',
};
/** SPIN writes a verifier in C; it needs a compiler. */
export const C_COMPILER: DebianProgram = {
  path: '/usr/bin/gcc',
  packages: ['gcc'],
  overrideEnv: 'CC',
};

/** One exhaustive run: the model's job, its plan length, and what is checked. */
export interface ModelRun {
  name: string;
  /** `-D` definitions for the model (JOB, NP, BUG_…). */
  defines: Record<string, string | number | true>;
  /**
   * Safety: every assert (the Invariants monitor's included) and no invalid end state.
   * Liveness: the `settles` claim under weak fairness.
   */
  check: 'safety' | 'liveness';
  /**
   * Compile the verifier without optimisation: for a search that ends at its first
   * counterexample (a planted mistake), compiling is most of the cost; an exhaustive search
   * is faster optimised.
   */
  quickCompile?: true;
  /**
   * Store states as they are, without COLLAPSE's compression: the same exhaustive search (every
   * state stored exactly), about a third faster, in about 1.7 times the memory. For a large
   * search that fits MEMORY_LIMIT_MB uncompressed (one that does not stops with "reached -DMEMLIM
   * bound", a failure, never a partial proof).
   */
  uncompressed?: true;
}

export interface ModelResult {
  run: ModelRun;
  states: number;
  transitions: number;
  depth: number;
  memoryMb: number;
  seconds: number;
  errors: number;
  /** The counterexample, step by step, when there is one. */
  counterexample?: string;
  /** What SPIN said was violated. */
  violation?: string;
  /** The counterexample's steps, each with the code it names. */
  trail?: Trail;
}

/** Memory the verifier may take, in MB: it stops with "out of memory" rather than swap. */
const MEMORY_LIMIT_MB = 4_000;

function execute(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.on('error', reject);
    // 'close', not 'exit': the child may exit before its output has been read to the end, and a
    // trail replay's last lines name the assert that failed.
    child.on('close', (code) => resolve({ code, output }));
  });
}

function defineFlags(defines: ModelRun['defines']): string[] {
  return Object.entries(defines).map(([name, value]) =>
    value === true ? `-D${name}` : `-D${name}=${value}`,
  );
}

function numberAfter(output: string, pattern: RegExp): number {
  const match = pattern.exec(output);
  return match ? Number(match[1]) : Number.NaN;
}

/** SPIN and a C compiler: taken from Debian's packages when missing (as the tests take nginx). */
export async function obtainSpin(
  log: (line: string) => void,
): Promise<{ spin: string; cc: string }> {
  return {
    spin: await obtainDebianProgram(SPIN, log),
    cc: await obtainDebianProgram(C_COMPILER, log),
  };
}

/**
 * Generates the verifier for one run, compiles it and searches the whole state space (no
 * bitstate hashing: states are stored exactly, compressed with COLLAPSE unless the run is
 * `uncompressed`). On an error the
 * trail is replayed by SPIN and turned into a readable counterexample.
 */
export async function verifyModel(
  run: ModelRun,
  tools: { spin: string; cc: string },
  modelFile = MODEL_FILE,
): Promise<ModelResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'onejob-model-'));
  try {
    const model = path.join(dir, 'onejob.pml');
    copyFileSync(modelFile, model);
    const defines = defineFlags(run.defines);
    const generated = await execute(tools.spin, [...defines, '-a', 'onejob.pml'], dir);
    if (generated.code !== 0) throw new Error(`spin -a failed:\n${generated.output}`);
    const safety = run.check === 'safety';
    const flags = [
      run.quickCompile ? '-O0' : '-O2',
      '-w',
      ...(run.uncompressed ? [] : ['-DCOLLAPSE']),
      `-DMEMLIM=${MEMORY_LIMIT_MB}`,
      // Safety: the asserts and the Invariants monitor, no claim. Liveness: room for the
      // fairness bookkeeping of every process the model may have alive at once.
      ...(safety ? ['-DSAFETY', '-DNOCLAIM'] : ['-DNFAIR=4']),
    ];
    await compiledVerifier(dir, tools.cc, flags);
    // -m: search depth; -N: the claim; -a -f: acceptance cycles under weak fairness.
    const searched = await execute(
      path.join(dir, 'pan'),
      ['-m100000', ...(safety ? [] : ['-a', '-f', '-N', 'settles'])],
      dir,
    );
    const output = searched.output;
    // A search stopped at MEMLIM says "reached -DMEMLIM bound" (and "Search not completed", which
    // a search that stops at its first counterexample says too), not "out of memory".
    if (/out of memory|reached -DMEMLIM bound|search depth too small/i.test(output))
      throw new Error(`the search of ${run.name} was not complete:\n${output.slice(-2_000)}`);
    const result: ModelResult = {
      run,
      states: numberAfter(output, /([\d.e+]+) states, stored/),
      transitions: numberAfter(output, /([\d.e+]+) transitions \(=/),
      depth: numberAfter(output, /depth reached (\d+)/),
      memoryMb: numberAfter(output, /([\d.]+)\s+total actual memory usage/),
      seconds: numberAfter(output, /elapsed time ([\d.e+]+) seconds/),
      errors: numberAfter(output, /errors: (\d+)/),
    };
    if (Number.isNaN(result.errors))
      throw new Error(`the verifier of ${run.name} gave no verdict:\n${output.slice(-2_000)}`);
    if (result.errors > 0) {
      const said = /pan:\d+: (.*)/.exec(output)?.[1]?.trim() ?? 'a violation';
      result.violation = said;
      if (existsSync(path.join(dir, 'onejob.pml.trail'))) {
        const replay = await execute(
          tools.spin,
          [...defines, '-t', '-p', '-g', '-l', '-k', 'onejob.pml.trail', 'onejob.pml'],
          dir,
        );
        const source = readFileSync(model, 'utf8');
        result.violation = violatedProperty(said, replay.output, source);
        result.trail = parseTrail(replay.output, source);
        result.counterexample = readableTrail(result.trail);
      }
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Compiles the verifier SPIN generated in `dir` to `dir/pan`, or copies it from the per-user
 * cache: the same generated C with the same flags and compiler makes the same program, and many
 * runs differ only in what they search (every search still runs).
 */
async function compiledVerifier(dir: string, cc: string, flags: string[]): Promise<void> {
  const hash = createHash('sha256').update(JSON.stringify([cc, flags]));
  for (const file of readdirSync(dir)
    .filter((name) => name.startsWith('pan.'))
    .sort())
    hash.update(file).update(readFileSync(path.join(dir, file)));
  const cached = path.join(onejobCacheDir('spin-verifiers'), `${hash.digest('hex')}.pan`);
  // Two lanes that need the same verifier at once compile it once.
  let compiling = compilations.get(cached);
  if (!compiling) {
    compiling = existsSync(cached) ? Promise.resolve() : compileTo(cached, dir, cc, flags);
    compilations.set(cached, compiling);
    compiling.catch(() => compilations.delete(cached));
  }
  await compiling;
  copyFileSync(cached, path.join(dir, 'pan'));
}

const compilations = new Map<string, Promise<void>>();

async function compileTo(cached: string, dir: string, cc: string, flags: string[]): Promise<void> {
  // Compiled beside the cache, then renamed: a search beside this one never copies half a program.
  mkdirSync(path.dirname(cached), { recursive: true });
  const partial = `${cached}.${process.pid}.partial`;
  const compiled = await execute(cc, [...flags, '-o', partial, 'pan.c'], dir);
  if (compiled.code !== 0) throw new Error(`compiling the verifier failed:\n${compiled.output}`);
  renameSync(partial, cached);
}

/**
 * Runs the searches `lanes` at a time, in the order given (each search is one process on one
 * core; put the longest first so the lanes end together).
 */
export async function verifyAll(
  runs: ModelRun[],
  tools: { spin: string; cc: string },
  lanes = 2,
): Promise<Map<ModelRun, ModelResult>> {
  const results = new Map<ModelRun, ModelResult>();
  const queue = [...runs];
  const lane = async (): Promise<void> => {
    for (let run = queue.shift(); run; run = queue.shift())
      results.set(run, await verifyModel(run, tools));
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}

/** The model as the C preprocessor leaves it for `defines` (as SPIN reads it), by line. */
async function preprocessed(
  defines: ModelRun['defines'],
  cc: string,
  modelFile: string,
): Promise<Map<number, string>> {
  const { code, output } = await execute(
    cc,
    ['-E', '-x', 'c', ...defineFlags(defines), modelFile],
    path.dirname(modelFile),
  );
  if (code !== 0) throw new Error(`preprocessing the model failed:\n${output}`);
  const lines = new Map<number, string>();
  let line = 0;
  let inModel = false;
  for (const text of output.split('\n')) {
    const marker = /^# (\d+) "([^"]*)"/.exec(text);
    if (marker) {
      line = Number(marker[1]);
      inModel = path.resolve(marker[2]!) === path.resolve(modelFile);
      continue;
    }
    if (inModel && text.trim() !== '') lines.set(line, text.trim());
    line += 1;
  }
  return lines;
}

/**
 * The model lines a define changes in a run: where the text SPIN reads differs with it and
 * without it (a planted mistake's own lines, and every line that uses a macro it redefines).
 */
export async function linesChangedBy(
  define: string,
  run: ModelRun,
  tools: { cc: string },
  modelFile = MODEL_FILE,
): Promise<number[]> {
  const without = Object.fromEntries(
    Object.entries(run.defines).filter(([name]) => name !== define),
  );
  const before = await preprocessed(without, tools.cc, modelFile);
  const after = await preprocessed({ ...without, [define]: true }, tools.cc, modelFile);
  const lines = new Set([...before.keys(), ...after.keys()]);
  return [...lines].filter((line) => before.get(line) !== after.get(line)).sort((a, b) => a - b);
}
