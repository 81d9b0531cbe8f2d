import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { CampaignReport } from '../../tools/chaos/campaign';
import { builtTool } from '../../tools/stack/build';
import { ROOT } from './harness';

/** `npm run chaos` as a person runs it: the compiled campaign in its own process. */
export async function runChaos(
  args: string[],
  reportFile: string,
  /** Extra environment (DATABASE_URL, TEMPORAL_ADDRESS: servers it uses instead of its own). */
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; output: string; report: CampaignReport | undefined }> {
  let output = '';
  const child = spawn(
    process.execPath,
    [builtTool('chaos', 'main.js'), ...args, '--report', reportFile],
    {
      cwd: ROOT,
      // The campaign starts its own servers unless told otherwise here: the test run's own
      // (the production engine's part sets DATABASE_URL) are not restarted under it.
      env: { ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const report = existsSync(reportFile)
    ? (JSON.parse(readFileSync(reportFile, 'utf8')) as CampaignReport)
    : undefined;
  return { code, output, report };
}
