import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  findOnPath,
  goInstall,
  isExecutable,
  onejobCacheDir,
  type BuildManners,
} from './goInstall';

/** The newest temporalio/cli release that `go install pkg@version` can build (later ones use `replace`). */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
/** The CLI's module at that release: the server's programs are built with its requirements. */
export const TEMPORAL_CLI_MODULE_VERSION = `github.com/temporalio/cli@v${TEMPORAL_CLI_VERSION}`;

export type TemporalCliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'built';

export interface TemporalCli {
  path: string;
  source: TemporalCliSource;
}

/** Per-user cache, outside any work tree, shared by every clone: `$XDG_CACHE_HOME/onejob/…`. */
export function temporalCliCacheDir(): string {
  return onejobCacheDir('temporal-cli', `v${TEMPORAL_CLI_VERSION}`);
}

/**
 * Finds the temporal CLI, in order: TEMPORAL_CLI_PATH, `temporal` on PATH, the per-user cache,
 * else a build from source.
 */
export async function obtainTemporalCli(
  log: (line: string) => void = console.log,
  manners: BuildManners = {},
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
  await goInstall(
    {
      what: `the temporal CLI v${TEMPORAL_CLI_VERSION}`,
      packages: [`${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`],
      ldflags: `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
      binaries: { temporal: 'temporal' },
      cacheDir: temporalCliCacheDir(),
      alternative:
        'set TEMPORAL_CLI_PATH to a temporal binary, or TEMPORAL_ADDRESS to an existing server',
    },
    log,
    manners,
  );
  return { path: cached, source: 'built' };
}
