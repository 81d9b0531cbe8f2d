import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support/harness';

/**
 * A newcomer follows what the docs and the comments point at: every relative link in a
 * Markdown file, and every path of the repository named in a doc or a comment, must exist.
 * A placeholder (`<name>`) or a pattern (`*`) is not a path; build output is not in git.
 */
const REPOSITORY_PATH =
  /(?<![\w./-])((?:src|tools|test|bench|docs|migrations|deploy|fixtures|model)\/[\w./-]*\w)/g;
const COMMENTS: Array<[RegExp, RegExp]> = [
  [/\.(ts|js|mjs)$/, /\/\/.*|\/\*[\s\S]*?\*\//g],
  [/\.sql$/, /--.*/g],
  [/\.(sh|ya?ml)$/, /#.*/g],
];
const GENERATED = ['bench/output', 'bench/results/', 'test-output'];

const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file && existsSync(path.join(ROOT, file)));

function exists(target: string): boolean {
  return ['', '.ts', '.js'].some((ending) => existsSync(path.join(ROOT, `${target}${ending}`)));
}

test('every link in the docs and every repository path named in a doc or a comment exists', () => {
  const dead: string[] = [];
  for (const file of tracked) {
    const text = (): string => readFileSync(path.join(ROOT, file), 'utf8');
    let prose: string[];
    if (file.endsWith('.md')) {
      prose = [text()];
      for (const [, target] of prose[0]!.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const resolved = path.normalize(path.join(path.dirname(file), target!));
        if (!existsSync(path.join(ROOT, resolved))) dead.push(`${file}: link ${target}`);
      }
    } else {
      const comments = COMMENTS.find(([kind]) => kind.test(file))?.[1];
      if (!comments || file === 'package-lock.json') continue;
      prose = [...text().matchAll(comments)].map((m) => m[0]);
    }
    for (const part of prose)
      for (const [, named] of part.matchAll(REPOSITORY_PATH)) {
        const target = named!.replace(/\.$/, '');
        if (/[<*]/.test(target) || GENERATED.some((g) => target.startsWith(g))) continue;
        if (!exists(target)) dead.push(`${file}: ${target}`);
      }
  }
  expect(tracked.length).toBeGreaterThan(100);
  expect([...new Set(dead)]).toEqual([]);
});
