import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../domain/packageRoot';

/**
 * `npm start`'s state folder (Temporal's SQLite file, embedded PostgreSQL's data, the record
 * of its database): ONEJOB_STATE_DIR, else `.onejob/` in the checkout. The operator CLI looks
 * in the same place.
 */
export function stateFolder(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.ONEJOB_STATE_DIR || path.join(PACKAGE_ROOT, '.onejob'));
}

/**
 * Makes the state folder, or takes over one that exists: 0700 either way, since it holds a
 * connection string and the databases' files (a folder made by hand or by an older version may
 * be readable by everyone, and mkdir leaves an existing folder's mode as it is).
 */
export function ensureStateFolder(dir: string): void {
  // A shared folder such as /tmp (sticky, open to all) is not ours to close.
  if (existsSync(dir) && (statSync(dir).mode & 0o1000) !== 0)
    throw new Error(
      `ONEJOB_STATE_DIR names a shared folder (${dir}); give onejob a folder of its own`,
    );
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}
