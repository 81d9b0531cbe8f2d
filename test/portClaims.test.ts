import { execFileSync } from 'node:child_process';
import { builtTool } from '../tools/stack/build';
import { claimPort, freePort } from '../tools/stack/processes';

/**
 * freePort across processes: a test run's workers and the stacks they start each pick ports; a
 * port one of them picked and has not bound yet must not be handed to another (seen before the
 * claims: a worker's health port taken by another test's process, EADDRINUSE).
 */
test('a port another process of ours has just handed out is not handed out again', async () => {
  const processes = builtTool('stack', 'processes.js');
  const picked = Number(
    execFileSync(
      process.execPath,
      ['-e', `require(${JSON.stringify(processes)}).freePort().then((p) => console.log(p))`],
      { encoding: 'utf8' },
    ).trim(),
  );
  expect(picked).toBeGreaterThan(0);
  // Unbound, so it looks free; the other process's claim is what keeps it.
  expect(claimPort(picked)).toBe(false);
  const mine = await freePort();
  expect(mine).not.toBe(picked);
  expect(claimPort(mine)).toBe(false); // and mine is claimed too
});
