/** Golden cases: the committed, realistic inputs a provider is certified on, per job type. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../domain/packageRoot';

/** Golden cases live in `fixtures/golden/<job type>.json`: realistic inputs, committed. */
export const GOLDEN_DIR = path.join(PACKAGE_ROOT, 'fixtures', 'golden');

export interface GoldenCase {
  name: string;
  input: Record<string, unknown>;
}

export async function loadGoldenCases(jobType: string, dir = GOLDEN_DIR): Promise<GoldenCase[]> {
  const cases = JSON.parse(
    await readFile(path.join(dir, `${jobType}.json`), 'utf8'),
  ) as GoldenCase[];
  if (!Array.isArray(cases) || cases.length === 0)
    throw new Error(`no golden cases for ${jobType} in ${dir}`);
  return cases;
}
