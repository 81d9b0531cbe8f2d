import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEV_TOKEN } from '../src/domain/publishedSecrets';
import { freePort } from '../tools/stack/processes';
import { runBuiltCli, type CliRun } from './support/cli';
import { embeddedStackSettings, runDevStart, untilRunning, exitOf } from './support/devStart';
import { TEST_OUTPUT } from './support/harness';
import { processesMentioning, waitUntil } from './support/processScan';

/**
 * A newcomer's first hour: `npm start` with no DATABASE_URL and nothing on the local
 * PostgreSQL port (here a closed port stands for 5432, which this machine's own server holds),
 * then the README's operator commands, also with DATABASE_URL unset.
 */
const stateDir = mkdtempSync(path.join(TEST_OUTPUT, 'dev-stack-embedded-'));
const recordFile = path.join(stateDir, 'database.json');

/** The CLI as a newcomer's shell runs it: no DATABASE_URL. */
const cli = (args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> =>
  runBuiltCli(args, { ...env, DATABASE_URL: undefined });

/** The pid of a process that has certainly ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

afterAll(() => {
  // Only if the test failed half-way: nothing of the stack may outlive the run.
  for (const { pid } of processesMentioning(stateDir)) process.kill(pid, 'SIGKILL');
});

test('npm start on embedded PostgreSQL prints its URL and records it; the CLI finds it without DATABASE_URL or Temporal', async () => {
  const { ports, env } = await embeddedStackSettings(stateDir);
  const { api, noPostgres } = ports;
  const noTemporal = await freePort();
  const stack = runDevStart(env);
  try {
    await untilRunning(stack);
    expect(stack.output()).toContain(
      `nothing on 127.0.0.1:${noPostgres}; starting embedded PostgreSQL`,
    );
    // The banner names the real server, without its password, and where the CLI finds it.
    const banner =
      /PostgreSQL {6}(postgres:\/\/\S+) {3}\(embedded; the onejob CLI finds it in (\S+)\)/.exec(
        stack.output(),
      );
    expect(banner?.[2]).toBe(recordFile);
    expect(banner?.[1]).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/onejob$/);
    expect(statSync(recordFile).mode & 0o777).toBe(0o600);

    const created = await fetch(`http://127.0.0.1:${api}/v1/jobs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEV_TOKEN}`,
        'content-type': 'application/json',
        'idempotency-key': 'newcomer-first-job',
      },
      body: JSON.stringify({ type: 'summarize', input: { text: 'First hour. It works.' } }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    // The README's commands, as a newcomer types them: no DATABASE_URL, and Temporal out of
    // reach, which commands that only read the database do not need.
    const env = { ONEJOB_STATE_DIR: stateDir, TEMPORAL_ADDRESS: `127.0.0.1:${noTemporal}` };
    const list = await cli(['jobs', 'list', '--json'], env);
    expect(list.stderr).toContain(`from ${recordFile}`);
    expect(list.stderr).not.toContain('postgres:postgres@');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ id, idempotencyKey: 'newcomer-first-job' }),
    ]);

    const show = await cli(['jobs', 'show', id], env);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`job ${id}  summarize`);

    const races = await cli(['races', 'list', '--json'], env);
    expect(races.code).toBe(0);
    expect(JSON.parse(races.stdout)).toEqual([]);
  } finally {
    process.kill(-stack.process.pid!, 'SIGINT');
    expect(await exitOf(stack)).toEqual({ code: 0 });
  }
  // Stopped: the record goes with it, and nothing of the stack is left.
  expect(existsSync(recordFile)).toBe(false);
  expect(await waitUntil(() => processesMentioning(stateDir).length === 0, 20_000)).toBe(true);
});

test('a record left by an npm start that is gone is called stale, in one line', async () => {
  const dir = mkdtempSync(path.join(TEST_OUTPUT, 'dev-stack-stale-'));
  const pid = await deadPid();
  writeFileSync(
    path.join(dir, 'database.json'),
    JSON.stringify({ url: 'postgres://postgres@127.0.0.1:1/onejob', source: 'embedded', pid }),
  );
  const list = await cli(['jobs', 'list'], { ONEJOB_STATE_DIR: dir });
  expect(list.code).toBe(1);
  expect(list.stderr).toBe(
    `onejob: ${path.join(dir, 'database.json')} is stale: the npm start that wrote it (pid ${pid}) is not running; start it again, or set DATABASE_URL\n`,
  );
});
