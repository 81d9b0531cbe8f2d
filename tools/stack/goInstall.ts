import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os, { setPriority } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { spawnGuarded } from './processes';

/**
 * Building our pinned Temporal programs (the CLI, the server, its SQL tool, the Web UI server)
 * from the Go module proxy, once, into a per-user cache shared by every clone.
 */

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Per-user cache, outside any work tree: `$XDG_CACHE_HOME/onejob/<parts>`. */
export function onejobCacheDir(...parts: string[]): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'onejob', ...parts);
}

export function findGo(): string | undefined {
  return findOnPath('go') ?? ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find(isExecutable);
}

function requireGo(what: string, alternative: string): string {
  const go = findGo();
  if (!go) {
    throw new Error(
      `Cannot obtain ${what}: it is not cached and Go is not installed to build it. ` +
        `Install Go (https://go.dev/dl), or ${alternative}.`,
    );
  }
  return go;
}

export interface GoInstall {
  /** What is being built, for messages: "the temporal CLI v1.5.1". */
  what: string;
  /** `package@version` arguments of `go install` (all from one module and version). */
  packages: string[];
  /**
   * `module@version` whose dependency graph the packages are built in, instead of their own
   * module's: with the graph of a program already built, the packages they share come from
   * Go's build cache rather than being compiled again with slightly different dependencies.
   */
  inGraphOf?: string;
  /**
   * Build the packages as tools of a throwaway module (`go get -tool`, then `go build`): for a
   * module whose go.mod has replace directives, which `go install pkg@version` refuses.
   */
  asTool?: boolean;
  ldflags?: string;
  /** Built binary name (the package's last path element) → its name in `cacheDir`. */
  binaries: Record<string, string>;
  cacheDir: string;
  /** How else a user can provide the program, for the error message. */
  alternative: string;
}

/** How a build runs beside other work. */
export interface BuildManners {
  /** Aborting it stops the build; goInstall then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Behind a stack that already serves: the build yields the CPU to it (nice 10), says only
   * when it starts and ends, not every 20 s in the middle of the user's terminal, and runs in a
   * process group of its own, so that a Ctrl-C stops it through `signal` rather than failing it.
   */
  background?: boolean;
}

/** nice(1)'s scale: a background build gives way to the stack, but still gets idle cores. */
const BACKGROUND_NICENESS = 10;

/** Every go command of a build: static binaries, and modules resolved as go.mod says. */
function goEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod', ...extra };
}

/**
 * `go install` into a temporary folder of the cache, then each binary is renamed into place,
 * so a half-written file is never used and a concurrent build by another clone is harmless.
 */
export async function goInstall(
  spec: GoInstall,
  log: (line: string) => void,
  manners: BuildManners = {},
): Promise<void> {
  manners.signal?.throwIfAborted();
  const go = requireGo(spec.what, spec.alternative);
  await mkdir(spec.cacheDir, { recursive: true });
  const buildDir = await mkdtemp(path.join(spec.cacheDir, 'build-'));
  const started = Date.now();
  log(`building ${spec.what} from source with ${go} (first time only; a few minutes)…`);
  const ticker = manners.background
    ? undefined
    : setInterval(
        () =>
          log(`  …still building ${spec.what} (${Math.round((Date.now() - started) / 1000)} s)`),
        20_000,
      );
  try {
    const build = await buildCommand(go, spec, buildDir, manners);
    let downloads = 0;
    await runGo(go, build, { GOBIN: buildDir }, spec, manners, (line) => {
      if (!line.startsWith('go: downloading')) return;
      downloads += 1;
      if (downloads % 50 === 0 && !manners.background) log(`  downloaded ${downloads} modules…`);
    });
    for (const [built, final] of Object.entries(spec.binaries)) {
      await rename(path.join(buildDir, built), path.join(spec.cacheDir, final));
    }
    log(`built ${spec.what} in ${Math.round((Date.now() - started) / 1000)} s → ${spec.cacheDir}`);
  } finally {
    clearInterval(ticker);
    await rm(buildDir, { recursive: true, force: true });
  }
}

/**
 * Runs one go command, guarded like every child of ours (if we die or are stopped, it stops
 * too); rejects with its last lines of output when it fails, with the signal's reason when
 * `manners.signal` stopped it.
 */
function runGo(
  go: string,
  command: { args: string[]; cwd?: string; describe: string },
  env: Record<string, string>,
  spec: GoInstall,
  manners: BuildManners,
  onLine: (line: string) => void = () => undefined,
): Promise<void> {
  const { signal } = manners;
  signal?.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const guarded = spawnGuarded(go, command.args, {
      cwd: command.cwd,
      env: goEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: manners.background ?? false,
    });
    const { child } = guarded;
    // The guardian only waits; the go command and the compilers it starts inherit this.
    if (manners.background && child.pid !== undefined) setPriority(child.pid, BACKGROUND_NICENESS);
    const abort = (): void => void guarded.stop();
    signal?.addEventListener('abort', abort, { once: true });
    void guarded.exited.then(() => signal?.removeEventListener('abort', abort));
    const tail: string[] = [];
    const onOutput = (chunk: Buffer): void => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        onLine(line);
      }
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.on('error', reject);
    // 'close', not 'exit': the last lines of output (the reason) have arrived by then.
    child.on('close', (code) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      if (code === 0) return resolve();
      reject(
        new Error(
          `${command.describe} failed (exit ${code}). ` +
            `Check that the Go module proxy is reachable (GOPROXY=${process.env.GOPROXY ?? 'default'}), ` +
            `or ${spec.alternative}. Last output:\n${tail.join('\n')}`,
        ),
      );
    });
  });
}

/**
 * `go install pkg@version…` in no module; or, with `inGraphOf`, `go build` inside a throwaway
 * module (in `buildDir`) whose requirements are that module's own; or, `asTool`, inside one that
 * requires the packages as tools.
 */
async function buildCommand(
  go: string,
  spec: GoInstall,
  buildDir: string,
  manners: BuildManners,
): Promise<{ args: string[]; cwd?: string; describe: string }> {
  const flags = ['-trimpath', ...(spec.ldflags ? ['-ldflags', spec.ldflags] : [])];
  if (spec.asTool) {
    const moduleDir = path.join(buildDir, 'module');
    await mkdir(moduleDir);
    await writeFile(path.join(moduleDir, 'go.mod'), 'module onejob.local/toolbuild\n');
    const args = ['get', '-tool', ...spec.packages];
    await runGo(go, { args, cwd: moduleDir, describe: `go ${args.join(' ')}` }, {}, spec, manners);
    const packages = spec.packages.map((pkg) => pkg.replace(/@[^@]*$/, ''));
    return {
      args: ['build', ...flags, '-o', `${buildDir}${path.sep}`, ...packages],
      cwd: moduleDir,
      describe: `go build ${packages.join(' ')} (as tools of a module of their own)`,
    };
  }
  if (!spec.inGraphOf)
    return {
      args: ['install', ...flags, ...spec.packages],
      describe: `go install ${spec.packages.join(' ')}`,
    };
  const graphDir = await goModuleDir(spec.inGraphOf, go);
  const moduleDir = path.join(buildDir, 'module');
  await mkdir(moduleDir);
  const goMod = await readFile(path.join(graphDir, 'go.mod'), 'utf8');
  await writeFile(
    path.join(moduleDir, 'go.mod'),
    goMod.replace(/^module .*$/m, 'module onejob.local/temporalbuild'),
  );
  await writeFile(
    path.join(moduleDir, 'go.sum'),
    await readFile(path.join(graphDir, 'go.sum'), 'utf8').catch(() => ''),
  );
  const packages = spec.packages.map((pkg) => pkg.replace(/@[^@]*$/, ''));
  return {
    args: ['build', ...flags, '-o', `${buildDir}${path.sep}`, ...packages],
    cwd: moduleDir,
    describe: `go build ${packages.join(' ')} (with the requirements of ${spec.inGraphOf})`,
  };
}

/** Where `go mod download` put a module's source (its schemas and sample configs live there). */
export async function goModuleDir(
  moduleAtVersion: string,
  go = requireGo(moduleAtVersion, 'provide the files another way'),
): Promise<string> {
  const { stdout } = await promisify(execFile)(go, ['mod', 'download', '-json', moduleAtVersion], {
    env: goEnv(),
    maxBuffer: 1 << 20,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string; Error?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${moduleAtVersion} gave no folder: ${stdout}`);
  return dir;
}
