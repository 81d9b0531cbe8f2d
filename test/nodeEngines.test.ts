import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { ROOT } from './support/harness';

/**
 * package.json's `engines.node` is a promise: `npm ci` works, without an EBADENGINE warning, on
 * every Node release it names. The lockfile records each package's own `engines.node`, so the
 * promise can be checked without installing anything, and a dependency bump that quietly drops
 * a Node line fails here rather than on a user's machine.
 */
interface LockedPackage {
  version?: string;
  engines?: { node?: unknown } | unknown[];
}

const readJson = <T>(file: string): T =>
  JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as T;

const manifest = readJson<{ engines?: { node?: string } }>('package.json');
const lock = readJson<{ packages: Record<string, LockedPackage> }>('package-lock.json');
const ours = manifest.engines?.node ?? '';

/** Whether every Node version `ours` admits is one `theirs` admits too (unparseable: no). */
function covers(theirs: string): boolean {
  try {
    return semver.subset(ours, theirs);
  } catch {
    return false;
  }
}

test('package.json names the Node lines it supports, and the lockfile was written from it', () => {
  expect(ours).not.toBe('');
  expect(semver.validRange(ours)).not.toBeNull();
  const root = lock.packages[''];
  expect(root?.engines).toEqual(manifest.engines);
});

test("every locked package supports every Node line package.json's engines names", () => {
  const offenders: string[] = [];
  for (const [where, locked] of Object.entries(lock.packages)) {
    if (where === '') continue;
    // Old packages may list engines as an array of strings; npm checks only the object form.
    const engines = locked.engines;
    if (engines === undefined || Array.isArray(engines)) continue;
    const theirs = engines.node;
    if (typeof theirs !== 'string') continue;
    if (!covers(theirs)) {
      offenders.push(`${where.replace(/^node_modules\//, '')}@${locked.version}: node ${theirs}`);
    }
  }
  expect(Object.keys(lock.packages).length).toBeGreaterThan(100);
  if (offenders.length > 0) {
    throw new Error(
      `${offenders.length} locked packages do not support all of node ${ours}:\n  ` +
        offenders.join('\n  '),
    );
  }
});

test("the Docker images' Node is a line package.json's engines names", () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const tags = [...dockerfile.matchAll(/^FROM\s+node:(\S+)/gim)].map((match) => match[1] ?? '');
  expect(tags.length).toBeGreaterThan(0);
  // `node:24-bookworm-slim` is whichever 24.x is newest when the image is built: all of 24.x
  // must be inside. A tag without a major (`node:lts`) cannot be held to engines, so it fails.
  const outside = tags.filter((tag) => {
    const major = /^(\d+)(?:$|[.-])/.exec(tag)?.[1];
    return major === undefined || !semver.subset(`${major}.x`, ours);
  });
  expect(outside).toEqual([]);
});
