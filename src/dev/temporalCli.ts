import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The newest temporalio/cli release that `go install pkg@version` can build (later ones use `replace`). */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

export type TemporalCliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'built';

export interface TemporalCli {
  path: string;
  source: TemporalCliSource;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Per-user cache, outside any work tree, shared by every clone: `$XDG_CACHE_HOME/onejob/…`. */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'onejob', 'temporal-cli', `v${TEMPORAL_CLI_VERSION}`);
}

function findGo(): string | undefined {
  return findOnPath('go') ?? ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find(isExecutable);
}

/**
 * Builds the CLI from source through the Go module proxy into the cache. The binary lands
 * under a temporary name and is renamed into place, so a half-written file is never used.
 */
async function buildTemporalCli(log: (line: string) => void): Promise<string> {
  const go = findGo();
  if (!go) {
    throw new Error(
      'Cannot obtain the temporal CLI: it is not on PATH, not cached, and Go is not installed to build it. ' +
        'Install Go (https://go.dev/dl), or set TEMPORAL_CLI_PATH to a temporal binary, or TEMPORAL_ADDRESS to an existing server.',
    );
  }
  const cacheDir = temporalCliCacheDir();
  await mkdir(cacheDir, { recursive: true });
  const buildDir = await mkdtemp(path.join(cacheDir, 'build-'));
  const started = Date.now();
  log(
    `building temporal CLI v${TEMPORAL_CLI_VERSION} from source with ${go} (first time only; a few minutes)…`,
  );
  const ticker = setInterval(
    () => log(`  …still building (${Math.round((Date.now() - started) / 1000)} s)`),
    20_000,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        go,
        [
          'install',
          '-trimpath',
          '-ldflags',
          `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
          `${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`,
        ],
        {
          env: { ...process.env, GOBIN: buildDir, CGO_ENABLED: '0' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const tail: string[] = [];
      let downloads = 0;
      const onOutput = (chunk: Buffer): void => {
        for (const line of chunk.toString().split('\n')) {
          if (!line.trim()) continue;
          tail.push(line);
          if (tail.length > 30) tail.shift();
          if (line.startsWith('go: downloading')) {
            downloads += 1;
            if (downloads % 50 === 0) log(`  downloaded ${downloads} modules…`);
          }
        }
      };
      child.stdout.on('data', onOutput);
      child.stderr.on('data', onOutput);
      child.on('error', reject);
      child.on('exit', (code) => {
        if (code === 0) return resolve();
        reject(
          new Error(
            `go install ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION} failed (exit ${code}). ` +
              `Check that the Go module proxy is reachable (GOPROXY=${process.env.GOPROXY ?? 'default'}), ` +
              `or set TEMPORAL_CLI_PATH to a temporal binary. Last output:\n${tail.join('\n')}`,
          ),
        );
      });
    });
    const target = path.join(cacheDir, 'temporal');
    await rename(path.join(buildDir, 'temporal'), target);
    log(`built temporal CLI in ${Math.round((Date.now() - started) / 1000)} s → ${target}`);
    return target;
  } finally {
    clearInterval(ticker);
    await rm(buildDir, { recursive: true, force: true });
  }
}

/**
 * Finds the temporal CLI, in order: TEMPORAL_CLI_PATH, `temporal` on PATH, the per-user cache,
 * else a build from source.
 */
export async function obtainTemporalCli(
  log: (line: string) => void = console.log,
): Promise<TemporalCli> {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv))
      throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable file`);
    return { path: fromEnv, source: 'TEMPORAL_CLI_PATH' };
  }
  const onPath = findOnPath('temporal');
  if (onPath) return { path: onPath, source: 'PATH' };
  const cached = path.join(temporalCliCacheDir(), 'temporal');
  if (existsSync(cached) && isExecutable(cached)) return { path: cached, source: 'cache' };
  return { path: await buildTemporalCli(log), source: 'built' };
}
