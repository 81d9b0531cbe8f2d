import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { embeddedStackSettings, runDevStart } from './support/devStart';
import { TEST_OUTPUT } from './support/harness';
import { processesMentioning, waitUntil } from './support/processScan';

/** `npm start` checks all its ports first, and says who holds a busy one and what moves it. */
async function hold(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

test('npm start refuses busy ports before it starts anything, naming the holder and the variable', async () => {
  const stateDir = mkdtempSync(path.join(TEST_OUTPUT, 'dev-stack-ports-'));
  const { ports, env } = await embeddedStackSettings(stateDir);
  const { api, metrics, health } = ports;
  // This test process holds three of them, as a forgotten server would.
  const held = [await hold(api), await hold(metrics), await hold(health)];
  try {
    const stack = runDevStart(env);
    const ended = await waitUntil(() => stack.process.exitCode !== null, 60_000);
    if (!ended) process.kill(-stack.process.pid!, 'SIGKILL');
    const code = await stack.exited;
    expect(code).toBe(1);
    const holder = `pid ${process.pid} (`;
    expect(stack.output()).toContain(`port ${api} (the API) is taken by ${holder}`);
    expect(stack.output()).toContain('set PORT to another port');
    expect(stack.output()).toContain(
      `port ${metrics} (the worker's metrics) is taken by ${holder}`,
    );
    expect(stack.output()).toContain('set ONEJOB_WORKER_METRICS_ADDRESS to another port');
    expect(stack.output()).toContain(
      `port ${health} (the worker's health checks) is taken by ${holder}`,
    );
    expect(stack.output()).toContain('set ONEJOB_WORKER_HEALTH_ADDRESS to another port');
    // Nothing slow was started: no PostgreSQL, no Temporal.
    expect(stack.output()).not.toMatch(/PostgreSQL:|Temporal:/);
    expect(await waitUntil(() => processesMentioning(stateDir).length === 0, 20_000)).toBe(true);
  } finally {
    for (const server of held) server.close();
  }
});
