/** Part of `npm run build`: bundles the workflow code for workers to load (see workflowBundle.ts). */
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WORKFLOW_TRACING_MODULE } from './tracing';
import { WORKFLOW_BUNDLE_PATH } from './workflowBundle';

async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, '..', 'workflows'),
    // Gated: a run is traced only when its start carried a trace (workflows/tracing.ts).
    workflowInterceptorModules: [WORKFLOW_TRACING_MODULE],
    logger: new DefaultLogger('WARN'),
  });
  writeFileSync(WORKFLOW_BUNDLE_PATH, code);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
