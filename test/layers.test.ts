import { execFileSync } from 'node:child_process';
import { ROOT } from './support/harness';

/**
 * The layer order of docs/architecture.md is a lint rule (eslint.config.mjs, LAYERS): an import
 * that points up a layer fails `npm run lint`. Each case lints one line as if it were written in
 * a file of src/ and counts what the layer rule says about it. ESLint loads its config as an ES
 * module, which jest's sandbox cannot, so one child process lints every case.
 */
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
const DOWNWARD: [file: string, line: string] = [
  'src/service/downward.ts',
  "export { DEFAULTS } from '../domain/defaults';",
];

const LINT_CASES = `
const { ESLint } = require('eslint');
const path = require('node:path');
const eslint = new ESLint({ cwd: process.cwd() });
(async () => {
  const counts = [];
  for (const [file, line] of JSON.parse(process.argv[1])) {
    const [result] = await eslint.lintText(line + '\\n', { filePath: path.resolve(file) });
    counts.push(result.messages.filter((m) => m.ruleId === 'import-x/no-restricted-paths').length);
  }
  process.stdout.write(JSON.stringify(counts));
})();
`;

let refusals: number[];
beforeAll(() => {
  const output = execFileSync(
    process.execPath,
    ['-e', LINT_CASES, JSON.stringify([...UPWARD, DOWNWARD])],
    { cwd: ROOT, encoding: 'utf8' },
  );
  refusals = JSON.parse(output) as number[];
});

test.each(UPWARD.map((c, i) => [...c, i] as const))(
  'an import that points up a layer fails lint: %s ← %s',
  (_file, _line, index) => {
    expect(refusals[index]).toBeGreaterThan(0);
  },
);

test('an import down the layers passes the layer rule', () => {
  expect(refusals[UPWARD.length]).toBe(0);
});
