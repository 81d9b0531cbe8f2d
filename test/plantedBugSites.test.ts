import { readFileSync } from 'node:fs';
import {
  PLANT_MARKER,
  PLANTED_BUGS,
  plantAtSite,
  type PlantedBug,
} from '../tools/chaos/plantedBugs';
import { builtProduct } from '../tools/stack/build';

/** The compiled product that the campaign copies (npm test builds it first). */
const compiled = (file: string): string => readFileSync(builtProduct(file), 'utf8');

const BUGS = Object.keys(PLANTED_BUGS) as PlantedBug[];

test.each(BUGS)(
  'planted bug %s finds its marked site in the compiled product, however the file is indented',
  (bug) => {
    const { file, from, to } = PLANTED_BUGS[bug];
    const source = compiled(file);
    const planted = plantAtSite(bug, source);
    expect(planted).toContain(to);
    // Exactly one place changed: what the marker points at.
    expect(planted.length - source.length).toBe(to.length - from.length);
    // Another formatter's indentation and line breaks move nothing.
    const reformatted = source.replace(/^ +/gm, (spaces) => '\t'.repeat(spaces.length / 2));
    expect(plantAtSite(bug, reformatted)).toContain(to);
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
