import { spawn } from 'node:child_process';
import { builtProduct } from '../../tools/stack/build';
import { harness } from './harness';
import type { TestStack } from './stack';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `onejob` CLI (dist/src/cli/main.js) with this process's environment and `env`
 * over it; a variable given as undefined is removed, as a user who never set it would have it.
 */
export function runBuiltCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const full: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete full[name];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [builtProduct('cli', 'main.js'), ...args], {
      env: full,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the `onejob` CLI against a stack's database and Temporal. */
export function runCli(
  stack: TestStack,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<CliRun> {
  return runBuiltCli(args, {
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: harness().temporalAddress,
    ...extraEnv,
  });
}
