import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { builtTool } from '../tools/stack/build';
import { TEST_OUTPUT } from './support/harness';
import { waitUntil } from './support/processScan';

/**
 * `go install` runs under the guardian like every child of ours: it dies with whoever started
 * it, and its failure reaches the caller with Go's own words. A stand-in `go` on PATH plays the
 * toolchain (a real build takes minutes and the network).
 */
function fakeGo(script: string): string {
  const dir = mkdtempSync(path.join(TEST_OUTPUT, 'fake-go-'));
  writeFileSync(path.join(dir, 'go'), `#!/bin/sh\n${script}\n`);
  chmodSync(path.join(dir, 'go'), 0o755);
  return dir;
}

/** A Node.js process running goInstall(), as `npm start` or the test set-up does. */
function runGoInstall(goDir: string) {
  const cacheDir = path.join(goDir, 'cache');
  const program = `
    require(${JSON.stringify(builtTool('stack', 'goInstall.js'))})
      .goInstall({ what: 'a test program', packages: ['example.com/x@v1.0.0'], binaries: { x: 'x' },
                   cacheDir: ${JSON.stringify(cacheDir)}, alternative: 'do without' }, () => {})
      .then(() => console.log('built'), (error) => { console.log(error.message); process.exit(3); });`;
  const child = spawn(process.execPath, ['-e', program], {
    env: { ...process.env, PATH: `${goDir}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, exited, output: () => output };
}

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('a go install whose starter is killed outright does not outlive it', async () => {
  const goDir = fakeGo(`echo $$ > "$(dirname "$0")/pid"\nexec sleep 600`);
  const run = runGoInstall(goDir);
  const pidFile = path.join(goDir, 'pid');
  expect(
    await waitUntil(
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '',
      20_000,
    ),
  ).toBe(true);
  const goPid = Number(readFileSync(pidFile, 'utf8'));
  expect(alive(goPid)).toBe(true);

  run.child.kill('SIGKILL');
  await run.exited;
  const gone = await waitUntil(() => !alive(goPid), 20_000);
  if (!gone) process.kill(goPid, 'SIGKILL');
  expect(gone).toBe(true);
});

test("a failed go install reports the exit code and Go's last words", async () => {
  const goDir = fakeGo(
    `echo "go: example.com/x@v1.0.0: module lookup disabled by GOPROXY=off" >&2\nexit 1`,
  );
  const run = runGoInstall(goDir);
  expect(await run.exited).toBe(3);
  expect(run.output()).toContain('go install example.com/x@v1.0.0 failed (exit 1)');
  expect(run.output()).toContain('module lookup disabled by GOPROXY=off');
});
