import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The folder that holds onejob's package.json (a checkout, or the installed package). Source
 * files run from `src/…` under ts-jest and tsx, compiled ones from `dist/src/…` and
 * `dist/tools/…`, so a fixed number of `..` cannot reach it from both; the nearest package.json
 * above does. Migrations, the golden fixtures and the tools' own files are found from here.
 */
export const PACKAGE_ROOT = findPackageRoot(__dirname);

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir)
      throw new Error(`no package.json above ${start}: onejob's files cannot be found`);
  }
}
