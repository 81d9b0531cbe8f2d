import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { childPids } from '../tools/stack/processes';
import { holdTransaction } from './support/barriers';
import { createTestDatabase } from './support/database';
import { ROOT, TEST_OUTPUT } from './support/harness';
import { eventually } from './support/polling';
import { startServiceUntilExit } from './support/serviceProcesses';
import { startTestStack } from './support/stack';

/**
 * The tests' own stack: one that cannot come up fails at once, says where the start stood, and
 * leaves nothing of its own running. A worker left polling would keep Jest waiting after the
 * file's last test, so a CI run would hang to its time limit instead of failing (seen once on the
 * production engine, when an API took longer than its wait).
 */
test('a stack whose API cannot start fails with the step it stopped at and leaves none of its processes running', async () => {
  const before = new Set(childPids(process.pid));
  const starting = startTestStack({
    workerProcess: true,
    // Nothing listens on port 1: the API fails applying its migrations, the worker is already up.
    apiDatabaseUrl: (databaseUrl) => {
      const url = new URL(databaseUrl);
      url.host = '127.0.0.1:1';
      return url.toString();
    },
  });
  await expect(starting).rejects.toThrow(
    /the API process did not become healthy: .*exited .*its start was at "migrations"/,
  );
  // Stopping is awaited before the rejection, so whatever is still here was left behind.
  expect(childPids(process.pid).filter((pid) => !before.has(pid))).toEqual([]);
});

/**
 * A database whose migrations table the test holds locked: a worker started on it waits at its
 * "migrations" step for as long as the lock is held, so its start cannot finish.
 */
async function heldMigrations() {
  const database = await createTestDatabase();
  const lock = await holdTransaction(
    database,
    'LOCK TABLE onejob_migrations IN ACCESS EXCLUSIVE MODE',
  );
  return {
    url: database.url,
    /** Until a statement of the service waits on the lock. */
    blocked: () => lock.blocked(''),
    async release(): Promise<void> {
      await lock.release();
      await database.drop();
    },
  };
}

test('a stack start that cannot finish gives up by its own deadline, says where it stood, and leaves none of its processes running', async () => {
  const held = await heldMigrations();
  try {
    const before = new Set(childPids(process.pid));
    const starting = startTestStack({
      workerProcess: true,
      env: { DATABASE_URL: held.url },
      startDeadlineMs: 10_000,
    });
    starting.catch(() => undefined);
    await held.blocked();
    await expect(starting).rejects.toThrow(
      /^the test stack did not start within 10000 ms \(at the worker process \(its start was at "migrations"/,
    );
    expect(childPids(process.pid).filter((pid) => !before.has(pid))).toEqual([]);
  } finally {
    await held.release();
  }
}, 60_000);

test("a stack start that outlives its beforeAll hook's timeout is given up when the file's hooks end: none of its processes outlive them, and Jest exits", async () => {
  const held = await heldMigrations();
  const report = path.join(TEST_OUTPUT, `stack-start-outlives-its-hook-${process.pid}.json`);
  rmSync(report, { force: true });
  // test/fixtures/stackStartOutlivesItsHook.ts in a Jest of its own, with this run's harness
  // (inherited through the environment) and the suite's per-file setup.
  const config = {
    rootDir: ROOT,
    roots: ['<rootDir>/test/fixtures'],
    testMatch: ['**/stackStartOutlivesItsHook.ts'],
    testEnvironment: 'node',
    transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
    setupFilesAfterEnv: ['<rootDir>/test/support/setupEachFile.ts'],
    // The suite's, as jest.config.js sets it: the hooks that stop things have that long.
    testTimeout: 120_000,
  };
  const jest = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
      '--config',
      JSON.stringify(config),
      '--runInBand',
      '--ci',
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ONEJOB_FIXTURE_DATABASE_URL: held.url,
        ONEJOB_FIXTURE_REPORT: report,
        ONEJOB_FIXTURE_HOOK_TIMEOUT_MS: '10000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  jest.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  jest.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => jest.on('close', resolve));
  try {
    // The start is held: its worker waits at the lock, past the hook's 10 s.
    await held.blocked();
    // The file's last hook ran (after Jest gave up on the beforeAll) and saw what still ran.
    await eventually(async () => existsSync(report), Boolean, 100_000);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toEqual({ running: [] });
    expect(await exited).toBe(1);
    expect(output).toContain('Exceeded timeout of 10000 ms for a hook');
  } finally {
    if (jest.exitCode === null && jest.signalCode === null) jest.kill('SIGKILL');
    await held.release();
    rmSync(report, { force: true });
  }
}, 180_000);

test('a worker asked to stop while its start waits at the migrations lock exits on SIGTERM alone, with nothing to drain', async () => {
  const held = await heldMigrations();
  try {
    const ended = await startServiceUntilExit(
      'worker',
      {
        DATABASE_URL: held.url,
        ONEJOB_WORKER_HEALTH_ADDRESS: 'off',
        // Never called: the start is held before it connects anywhere.
        ONEJOB_SIMULATOR_URL: 'http://127.0.0.1:1',
      },
      (worker) => void held.blocked().then(() => worker.kill('SIGTERM')),
    );
    // Its own exit on the request to stop (a signal's end would leave no code): no supervisor's
    // SIGKILL after a grace was needed.
    expect(ended.code).toBe(143);
  } finally {
    await held.release();
  }
}, 60_000);
