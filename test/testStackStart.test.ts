import { childPids } from '../tools/stack/processes';
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
