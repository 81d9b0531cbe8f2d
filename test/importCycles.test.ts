import path from 'node:path';
import { ROOT } from './support/harness';
import { importsOf, sourceFiles } from './support/sourceImports';

/**
 * ESLint's import-x/no-cycle skips `import type`, so this also follows type-only imports: no
 * module of src/ may lead back to itself through any import, erased at run time or not.
 */
const SRC = path.join(ROOT, 'src');

test('no module in src/ imports itself back through any chain of imports, type-only ones included', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
  const cycles: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'visiting') {
      const loop = [...trail.slice(trail.indexOf(file)), file];
      cycles.push(loop.map((f) => path.relative(ROOT, f)).join(' → '));
      return;
    }
    state.set(file, 'visiting');
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  expect(graph.size).toBeGreaterThan(50);
  expect(cycles).toEqual([]);
});
