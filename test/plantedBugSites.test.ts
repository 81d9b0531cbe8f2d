import { readFileSync } from 'node:fs';
import {
  codePattern,
  PLANT_MARKER,
  PLANTED_BUGS,
  plantAtSite,
  type PlantedBug,
} from '../tools/chaos/plantedBugs';
import { builtProduct } from '../tools/stack/build';

/** The compiled product that the campaign copies (npm test builds it first). */
const compiled = (file: string): string => readFileSync(builtProduct(file), 'utf8');

const BUGS = Object.keys(PLANTED_BUGS) as PlantedBug[];

/** How many times `code` occurs in `text`, whatever the whitespace between its words. */
function occurrences(text: string, code: string): number {
  return text.match(codePattern(code, 'g'))?.length ?? 0;
}

test.each(BUGS)(
  'planted bug %s replaces the code at its marked site in the compiled product, however the file is indented: the new code is in, the old code is gone',
  (bug) => {
    const { file, from, to } = PLANTED_BUGS[bug];
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
  const source = compiled(file);
  expect(() => plantAtSite('retries-off', source.replace(PLANT_MARKER, ''))).toThrow(
    /must mark its site once/,
  );
  const marker = `${PLANT_MARKER}retries-off\n`;
  expect(() =>
    plantAtSite('retries-off', source.replace(marker, `${marker}${' '.repeat(500)}\n`)),
  ).toThrow(/is not right after its site/);
});
