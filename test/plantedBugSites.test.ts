import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/domain/packageRoot';
import {
  codePattern,
  latestDefinition,
  PLANT_MARKER,
  PLANTED_BUGS,
  plantAtSite,
  plantedMigration,
  SITED_BUGS,
  type PlantedBug,
} from '../tools/chaos/plantedBugs';
import { builtProduct } from '../tools/stack/build';

/** The compiled product that the campaign copies (npm test builds it first). */
const compiled = (file: string): string => readFileSync(builtProduct(file), 'utf8');

const REDEFINING = (Object.keys(PLANTED_BUGS) as PlantedBug[]).filter(
  (bug) => typeof PLANTED_BUGS[bug].migration === 'object',
);

/** How many times `code` occurs in `text`, whatever the whitespace between its words. */
function occurrences(text: string, code: string): number {
  return text.match(codePattern(code, 'g'))?.length ?? 0;
}

test.each(SITED_BUGS)(
  'planted bug %s replaces the code at its marked site in the compiled product, however the file is indented: the new code is in, the old code is gone',
  (bug) => {
    const { file, from, to } = PLANTED_BUGS[bug] as { file: string; from: string; to: string };
    const source = compiled(file);
    // The site exists as the plant expects it, so the checks below are not vacuous.
    expect(occurrences(source, from)).toBeGreaterThanOrEqual(1);
    // Another formatter's indentation and line breaks move nothing.
    const reformatted = source.replace(/^ +/gm, (spaces) => '\t'.repeat(spaces.length / 2));
    for (const original of [source, reformatted]) {
      const planted = plantAtSite(bug, original);
      expect(planted).toContain(to);
      // The old code is gone: the copy holds it once less than the original (besides where the
      // new code holds it itself, as a plant that adds a step before it does). A plant that
      // wrote its code elsewhere, or beside the old code, would leave the service as it was.
      expect(occurrences(planted, from)).toBe(
        occurrences(original, from) - 1 + occurrences(to, from),
      );
      // Exactly one place changed: what the marker points at.
      if (original === source) expect(planted.length - source.length).toBe(to.length - from.length);
    }
  },
);

test('a site whose marker is gone, or whose code moved away from it, refuses to plant', () => {
  const { file } = PLANTED_BUGS['retries-off'];
  const source = compiled(file!);
  expect(() => plantAtSite('retries-off', source.replace(PLANT_MARKER, ''))).toThrow(
    /must mark its site once/,
  );
  const marker = `${PLANT_MARKER}retries-off\n`;
  expect(() =>
    plantAtSite('retries-off', source.replace(marker, `${marker}${' '.repeat(500)}\n`)),
  ).toThrow(/is not right after its site/);
});

test.each(REDEFINING)(
  'planted bug %s redefines a function of the migrations as its latest migration has it, but for its own change: the new code is in, the old code is gone, nothing else differs',
  (bug) => {
    const {
      function: name,
      from,
      to,
    } = PLANTED_BUGS[bug].migration as {
      function: string;
      from: string;
      to: string;
    };
    const original = latestDefinition(name, path.join(PACKAGE_ROOT, 'migrations'));
    // The code to change is in the function, once, so the check below is not vacuous.
    expect(occurrences(original, from)).toBe(1);
    const planted = plantedMigration(bug)!;
    expect(planted).toMatch(new RegExp(`^CREATE OR REPLACE FUNCTION ${name}\\(`));
    expect(planted).toContain(to);
    expect(occurrences(planted, from)).toBe(0);
    expect(planted.replace(to, from).replace(/^CREATE OR REPLACE/, '')).toBe(
      original.replace(codePattern(from), from).replace(/^CREATE( OR REPLACE)?/, ''),
    );
  },
);

test('a redefinition follows the function to its latest migration, and refuses to plant once its code is gone', () => {
  const bug = REDEFINING[0]!;
  const { function: name, from } = PLANTED_BUGS[bug].migration as {
    function: string;
    from: string;
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'planted-migrations-'));
  const original = latestDefinition(name, path.join(PACKAGE_ROOT, 'migrations'));
  writeFileSync(path.join(dir, '0001_first.sql'), `${original}\n`);
  // A later migration redefines it, with a check more: the plant keeps that check.
  const later = original
    .replace(/^CREATE( OR REPLACE)? FUNCTION/, 'CREATE OR REPLACE FUNCTION')
    .replace('BEGIN', 'BEGIN\n  PERFORM 1; -- a later change');
  writeFileSync(path.join(dir, '0002_later.sql'), `SELECT 1;\n${later}\nSELECT 2;\n`);
  expect(plantedMigration(bug, dir)).toContain('PERFORM 1; -- a later change');
  // A later migration that drops the code to change: the plant refuses rather than plant nothing.
  writeFileSync(path.join(dir, '0003_moved.sql'), later.replace(codePattern(from), 'IF true THEN'));
  expect(() => plantedMigration(bug, dir)).toThrow(/occurs 0 times/);
});
