/** Part of `npm run build`: bundles the workflow code for workers to load (see workflowBundle.ts). */
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { WORKFLOW_TRACING_MODULE } from '../telemetry/temporalTracing';
import { WORKFLOW_BUNDLE_PATH } from './workflowBundle';

/** The compiled product (dist/src), whose modules are what the bundle can hold. */
const PRODUCT = path.join(__dirname, '..');
const FINGERPRINT_PATH = `${WORKFLOW_BUNDLE_PATH}.fingerprint`;

/** Every compiled module's path (the bundle itself aside), sorted. */
function productFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => file !== WORKFLOW_BUNDLE_PATH)
    .sort();
}

/**
 * What the bundle is made of: the compiled product and the locked dependencies (webpack takes
 * @temporalio/workflow and the interceptors' packages from node_modules). Equal fingerprints,
 * equal bundles: a second `npm start` skips webpack's seconds.
 */
function fingerprint(): string {
  const hash = createHash('sha256');
  for (const file of productFiles(PRODUCT)) {
    hash.update(path.relative(PRODUCT, file));
    hash.update(readFileSync(file));
  }
  const lockfile = path.join(PRODUCT, '..', '..', 'package-lock.json');
  if (existsSync(lockfile)) hash.update(readFileSync(lockfile));
  return hash.digest('hex');
}

async function main(): Promise<void> {
  const current = fingerprint();
  const previous = existsSync(FINGERPRINT_PATH) ? readFileSync(FINGERPRINT_PATH, 'utf8') : '';
  if (current === previous && existsSync(WORKFLOW_BUNDLE_PATH)) {
    // Newer than src again, for the tests' check of a stale bundle (test/support/globalSetup.ts).
    const now = new Date();
    utimesSync(WORKFLOW_BUNDLE_PATH, now, now);
    return;
  }
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, '..', 'workflows'),
    // Gated: a run is traced only when its start carried a trace (workflows/tracing.ts).
    workflowInterceptorModules: [WORKFLOW_TRACING_MODULE],
    logger: new DefaultLogger('WARN'),
  });
  writeFileSync(WORKFLOW_BUNDLE_PATH, code);
  writeFileSync(FINGERPRINT_PATH, current);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
