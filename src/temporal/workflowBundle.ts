import type { WorkflowBundleOption } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The job workflow's code, bundled once by `npm run build` (dist/src/temporal/workflow-bundle.js) rather than
 * by every worker at start: webpack in a running worker costs seconds and leaves its memory
 * behind. A build without it (tsc alone) bundles at start; a copy with a bug planted in the
 * workflow code gets its own (tools/chaos/plantedBugs.ts).
 */
export const WORKFLOW_BUNDLE_PATH = path.join(__dirname, 'workflow-bundle.js');

export function prebuiltWorkflowBundle(): WorkflowBundleOption | undefined {
  return existsSync(WORKFLOW_BUNDLE_PATH) ? { codePath: WORKFLOW_BUNDLE_PATH } : undefined;
}
