import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './support/harness';

/**
 * The layer order of docs/architecture.md is a lint rule (eslint.config.mjs, LAYERS): an import
 * that points up a layer fails `npm run lint`. Each case lints one line as if it were written in
 * a file of src/, and expects the rule to name it.
 */
function lintAs(file: string, line: string): string {
  const run = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/eslint/bin/eslint.js'),
      '--stdin',
      '--stdin-filename',
      path.join(ROOT, file),
    ],
    { cwd: ROOT, input: `${line}\n`, encoding: 'utf8' },
  );
  return run.stdout + run.stderr;
}

const UPWARD: Array<[file: string, line: string]> = [
  ['src/config.ts', "export { sendProblem } from './api/problems';"],
  ['src/service/upward.ts', "export { sendProblem } from '../api/problems';"],
  ['src/service/upward.ts', "export { attemptLooks } from '../activities/attempts';"],
  ['src/db/upward.ts', "export { createJob } from '../service/jobs';"],
  ['src/domain/upward.ts', "export { DEFAULTS } from '../config';"],
  ['src/telemetry/upward.ts', "export { sendProblem } from '../api/problems';"],
  ['src/cli/upward.ts', "export { sendProblem } from '../api/problems';"],
  ['src/api/upward.ts', "export { main } from '../bin/parentLink';"],
];

test.each(UPWARD)('an import that points up a layer fails lint: %s ← %s', (file, line) => {
  expect(lintAs(file, line)).toContain('import-x/no-restricted-paths');
});

test('an import down the layers passes the layer rule', () => {
  expect(
    lintAs('src/service/downward.ts', "export { DEFAULTS } from '../domain/defaults';"),
  ).not.toContain('import-x/no-restricted-paths');
});
