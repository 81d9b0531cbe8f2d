import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { ProviderConfig } from '../../src/providers/provider';
import { harness, TEST_OUTPUT } from '../support/harness';
import { eventually } from '../support/polling';
import { chatProvider, TIMES_OUT_SOON_MS } from '../support/providers';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * An operator finds a stuck job in the real Temporal Web UI, driven in Debian's Chromium:
 * filter by JobStatus = "unknown", open the workflow, read what it waits on.
 */
const SCREENSHOTS = path.join(TEST_OUTPUT, 'screenshots');

let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  stack = await startTestStack({
    providers: (url): ProviderConfig[] => [
      chatProvider(url, 'chat', 'sim-steady', {
        timeoutMs: TIMES_OUT_SOON_MS,
        lateResultTimeoutMs: 60_000,
      }),
    ],
  });
  browser = await chromium.launch({
    executablePath: harness().chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

test('an unknown job is found by JobStatus in the Web UI, with its summary and its attempt named', async () => {
  stack.simulator.inject({ route: 'chat', fault: { kind: 'hang' } });
  const created = await stack.request('POST', '/v1/jobs', {
    headers: { 'idempotency-key': 'web-ui-unknown' },
    body: {
      type: 'summarize',
      input: { text: 'Stuck on purpose. Operators must see why.' },
      providers: ['chat'],
    },
  });
  const job = (await created.json()) as { id: string; workflowId: string };
  await eventually(
    async () =>
      ((await (await stack.request('GET', `/v1/jobs/${job.id}`)).json()) as { status: string })
        .status,
    (s) => s === 'unknown',
  );
  // Visibility catches up with the search attribute shortly after.
  await eventually(
    async () =>
      (
        await stack.temporal.workflow.count(
          `JobStatus = "unknown" AND WorkflowId = "${job.workflowId}"`,
        )
      ).count,
    (n) => n === 1,
  );

  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const ui = harness().temporalUiUrl;
  await page.goto(
    `${ui}/namespaces/default/workflows?query=${encodeURIComponent('JobStatus="unknown"')}`,
  );
  const link = page.getByRole('link', { name: job.workflowId });
  await link.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: path.join(SCREENSHOTS, 'unknown-jobs-list.png'), fullPage: true });

  await link.click();
  await page.getByText(`summarize job ${job.id}`).first().waitFor({ timeout: 30_000 });
  await page.getByText('attempt 1 on chat').first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: path.join(SCREENSHOTS, 'unknown-job-detail.png'), fullPage: true });
  // The workflow's current details say what it waits on.
  await page.getByText('User Metadata').first().click();
  await page.waitForTimeout(2_000);
  await page.screenshot({
    path: path.join(SCREENSHOTS, 'unknown-job-metadata.png'),
    fullPage: true,
  });
  // The UI renders summaries and details as markdown inside sandboxed frames.
  const framesText = async (): Promise<string> =>
    (
      await Promise.all(
        page.frames().map((frame) =>
          frame
            .locator('body')
            .innerText()
            .catch(() => ''),
        ),
      )
    ).join('\n');
  const text = await eventually(
    framesText,
    (t) => /blocked: attempt 1 on chat is unknown since/.test(t),
    10_000,
  );
  expect(text).toContain(`summarize job ${job.id} for owner-a@example.com (key web-ui-unknown)`);
  expect(text).toContain('providers: chat');
});
