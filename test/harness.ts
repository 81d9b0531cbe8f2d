import path from 'node:path';

/** What global setup hands to every test file (through the environment). */
export interface HarnessInfo {
  temporalAddress: string;
  /** The dev server's Web UI, for the browser test. */
  temporalUiUrl: string;
  temporalCliPath: string;
  adminDatabaseUrl: string;
  workflowBundlePath: string;
  /** Debian's Chromium (the Web UI test) and nginx (the load-balancer test). */
  chromiumPath: string;
  nginxPath: string;
}

export const ROOT = path.resolve(__dirname, '..');
export const TEST_OUTPUT = path.join(ROOT, 'test-output');
const ENV_KEY = 'ONEJOB_TEST_HARNESS';

export function publishHarness(info: HarnessInfo): void {
  process.env[ENV_KEY] = JSON.stringify(info);
}

export function harness(): HarnessInfo {
  const raw = process.env[ENV_KEY];
  if (!raw)
    throw new Error(
      'the test harness is not running: run the tests with `npm test` (jest global setup)',
    );
  return JSON.parse(raw) as HarnessInfo;
}
