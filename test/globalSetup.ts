import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM, NGINX, obtainDebianProgram } from '../src/dev/debianPackages';
import { resolveDatabase, type ResolvedDatabase } from '../src/dev/postgres';
import { obtainTemporalCli } from '../src/dev/temporalCli';
import { startTemporalDevServerOnFreePorts, type DevServer } from '../src/dev/temporalServer';
import { publishHarness, ROOT, TEST_OUTPUT } from './harness';

declare global {
  // Handles for global teardown, which runs in the same process.
  var onejobTestServers: { temporal?: DevServer; database?: ResolvedDatabase } | undefined;
}

/**
 * One real Temporal dev server (in memory, headless, random port) and one PostgreSQL server for
 * the whole run. Each test file then makes its own database and task queue (see helpers.ts).
 * If either cannot be had, the run fails here, loudly; no test is skipped.
 */
export default async function globalSetup(): Promise<void> {
  const log = (line: string): void => console.log(`[test-setup] ${line}`);
  mkdirSync(TEST_OUTPUT, { recursive: true });
  globalThis.onejobTestServers = {};

  const started = Date.now();
  // Debian's programs one after the other (apt holds a lock), while the rest gets going.
  const programs = (async () => ({
    chromiumPath: await obtainDebianProgram(CHROMIUM, log),
    nginxPath: await obtainDebianProgram(NGINX, log),
  }))();
  programs.catch(() => undefined);
  const cli = await obtainTemporalCli(log);
  const [database, temporal, bundle, { chromiumPath, nginxPath }] = await Promise.all([
    resolveDatabase({ stateDir: path.join(TEST_OUTPUT, 'state'), log }),
    startTemporalDevServerOnFreePorts({
      cliPath: cli.path,
      logFile: path.join(TEST_OUTPUT, 'temporal-server.log'),
    }),
    bundleWorkflowCode({
      workflowsPath: path.join(ROOT, 'src', 'workflows'),
      logger: new DefaultLogger('WARN'),
    }),
    programs,
  ]);
  globalThis.onejobTestServers = { temporal, database };
  const workflowBundlePath = path.join(TEST_OUTPUT, 'workflow-bundle.js');
  writeFileSync(workflowBundlePath, bundle.code);

  publishHarness({
    temporalAddress: temporal.address,
    temporalUiUrl: temporal.uiUrl!,
    temporalCliPath: cli.path,
    adminDatabaseUrl: database.adminUrl,
    workflowBundlePath,
    chromiumPath,
    nginxPath,
  });
  log(
    `temporal ${temporal.address} (${cli.source}), PostgreSQL ${database.source}, ready in ${Date.now() - started} ms`,
  );
}
