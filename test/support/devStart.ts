import { spawn, type ChildProcess } from 'node:child_process';
import { builtTool } from '../../tools/stack/build';
import { freePort } from '../../tools/stack/processes';
import { harness } from './harness';
import { waitUntil } from './processScan';

/** `npm start` (dist/tools/stack/start.js) as a terminal runs it, with its output collected. */
export interface StartedStack {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function runDevStart(env: NodeJS.ProcessEnv): StartedStack {
  const full: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_CLI_PATH: harness().temporalCliPath,
    LOG_LEVEL: 'warn',
    ...env,
  };
  delete full.ONEJOB_API_TOKENS;
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete full[name];
  // Its own process group, like a terminal's foreground job, so Ctrl-C can reach every member.
  const child = spawn(process.execPath, [builtTool('stack', 'start.js')], {
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { process: child, output: () => output, exited };
}

/** The stack's exit code, with its output when that is not 0 (a failure then says why it stopped). */
export async function exitOf(
  stack: StartedStack,
): Promise<{ code: number | null; output?: string }> {
  const code = await stack.exited;
  return code === 0 ? { code } : { code, output: stack.output() };
}

/** Waits for the banner; throws with the output if the stack exited instead. */
export async function untilRunning(stack: StartedStack, timeoutMs = 180_000): Promise<void> {
  const ready = await waitUntil(
    () => stack.output().includes('onejob is running') || stack.process.exitCode !== null,
    timeoutMs,
  );
  if (!ready || stack.process.exitCode !== null)
    throw new Error(`npm start did not become ready:\n${stack.output()}`);
}

/** The ports a private `npm start` listens on, and the closed port it probes for PostgreSQL. */
export interface DevStackPorts {
  api: number;
  temporal: number;
  ui: number;
  simulator: number;
  metrics: number;
  health: number;
  /** Where the local PostgreSQL probe looks: nothing listens there. */
  noPostgres: number;
}

/**
 * Settings for an `npm start` of its own on embedded PostgreSQL: free ports, this state folder,
 * no DATABASE_URL, no TEMPORAL_ADDRESS, and nothing at the local address it probes first.
 */
export async function embeddedStackSettings(
  stateDir: string,
): Promise<{ ports: DevStackPorts; env: NodeJS.ProcessEnv }> {
  const [api, temporal, ui, simulator, metrics, health, noPostgres] = await Promise.all(
    Array.from({ length: 7 }, () => freePort()),
  );
  const ports = { api, temporal, ui, simulator, metrics, health, noPostgres } as DevStackPorts;
  return {
    ports,
    env: {
      DATABASE_URL: undefined,
      TEMPORAL_ADDRESS: undefined,
      ONEJOB_LOCAL_POSTGRES_URL: `postgres://postgres@127.0.0.1:${ports.noPostgres}/postgres`,
      ONEJOB_STATE_DIR: stateDir,
      PORT: String(ports.api),
      TEMPORAL_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
      SIMULATOR_PORT: String(ports.simulator),
      ONEJOB_WORKER_METRICS_ADDRESS: `127.0.0.1:${ports.metrics}`,
      ONEJOB_WORKER_HEALTH_ADDRESS: `127.0.0.1:${ports.health}`,
      // Jaeger is the other dev stack test's to look at.
      ONEJOB_TRACE_UI: 'off',
    },
  };
}
