import { spawn } from 'node:child_process';
import { builtProduct } from '../../tools/stack/build';
import { harness } from './harness';
import type { TestStack } from './stack';

/** Runs the `onejob` CLI (dist/src/cli/main.js) against a stack's database and Temporal. */
export function runCli(
  stack: TestStack,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [builtProduct('cli', 'main.js'), ...args], {
      env: {
        ...process.env,
        DATABASE_URL: stack.databaseUrl,
        TEMPORAL_ADDRESS: harness().temporalAddress,
        LOG_LEVEL: 'silent',
        ...extraEnv,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
