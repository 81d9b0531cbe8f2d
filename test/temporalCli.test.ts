import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { obtainTemporalCli, TEMPORAL_CLI_VERSION } from '../tools/stack/temporalCli';
import { TEST_OUTPUT } from './support/harness';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

function fakeBinary(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'temporal');
  writeFileSync(file, '#!/bin/sh\necho fake\n');
  chmodSync(file, 0o755);
  return file;
}

test('the CLI is looked up in order: TEMPORAL_CLI_PATH, then PATH, then the per-user cache', async () => {
  const base = mkdtempSync(path.join(TEST_OUTPUT, 'cli-lookup-'));
  const onPath = fakeBinary(path.join(base, 'bin'));
  const cacheHome = path.join(base, 'cache');
  const cached = fakeBinary(
    path.join(cacheHome, 'onejob', 'temporal-cli', `v${TEMPORAL_CLI_VERSION}`),
  );
  const explicit = fakeBinary(path.join(base, 'explicit'));

  process.env.XDG_CACHE_HOME = cacheHome;
  process.env.PATH = `${path.join(base, 'bin')}:/usr/bin:/bin`;
  process.env.TEMPORAL_CLI_PATH = explicit;
  await expect(obtainTemporalCli()).resolves.toEqual({
    path: explicit,
    source: 'TEMPORAL_CLI_PATH',
  });

  delete process.env.TEMPORAL_CLI_PATH;
  await expect(obtainTemporalCli()).resolves.toEqual({ path: onPath, source: 'PATH' });

  process.env.PATH = '/usr/bin:/bin';
  await expect(obtainTemporalCli()).resolves.toEqual({ path: cached, source: 'cache' });
});

test('a TEMPORAL_CLI_PATH that is not executable is a clear error, not a silent fallback', async () => {
  const base = mkdtempSync(path.join(TEST_OUTPUT, 'cli-bad-'));
  const notExecutable = path.join(base, 'temporal');
  writeFileSync(notExecutable, 'not a program');
  process.env.TEMPORAL_CLI_PATH = notExecutable;
  await expect(obtainTemporalCli()).rejects.toThrow(
    `TEMPORAL_CLI_PATH=${notExecutable} is not an executable file`,
  );
});
