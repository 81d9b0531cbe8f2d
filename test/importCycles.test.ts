import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness';

/**
 * ESLint's import-x/no-cycle skips `import type`, so this also follows type-only imports: no
 * module of src/ may lead back to itself through any import, erased at run time or not.
 */
const SRC = path.join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

/** The src/ files a module imports, by relative specifiers (`from './x'`, `import('./x')`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map(
    (m) => m[1]!,
  );
  return specifiers.flatMap((specifier) => {
    const base = path.resolve(path.dirname(file), specifier);
    const found = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => existsSync(f));
    return found ? [found] : [];
  });
}

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
