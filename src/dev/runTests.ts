import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  TEMPORAL_ENGINE_VARIABLE,
  temporalEngineKind,
  type TemporalEngineKind,
} from './temporalEngine';

/**
 * `npm test`: the whole suite on the dev server, then the engine-sensitive tests (listed in
 * jest.config.js) on the production engine, the Temporal server on PostgreSQL. Arguments go to
 * both jest runs (`npm test -- test/hedging.test.ts`); ONEJOB_TEMPORAL_ENGINE=dev or =cluster
 * runs one engine only.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');

function runJest(engine: TemporalEngineKind, args: string[]): Promise<number> {
  console.log(
    `\n== tests on the ${engine === 'dev' ? 'dev server' : 'Temporal server on PostgreSQL'} (${TEMPORAL_ENGINE_VARIABLE}=${engine})\n`,
  );
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      // A file filter that names no engine-sensitive test leaves the cluster run empty: fine.
      [JEST, '--runInBand', ...(engine === 'cluster' ? ['--passWithNoTests'] : []), ...args],
      { cwd: ROOT, stdio: 'inherit', env: { ...process.env, [TEMPORAL_ENGINE_VARIABLE]: engine } },
    );
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const engines: TemporalEngineKind[] = process.env[TEMPORAL_ENGINE_VARIABLE]
    ? [temporalEngineKind()]
    : ['dev', 'cluster'];
  const failed: TemporalEngineKind[] = [];
  for (const engine of engines) {
    if ((await runJest(engine, args)) !== 0) failed.push(engine);
  }
  if (failed.length > 0) {
    console.error(`\ntests failed on: ${failed.join(', ')}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(`npm test: ${(error as Error).message}`);
  process.exit(1);
});
