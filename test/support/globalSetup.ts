import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { builtProduct } from '../../tools/stack/build';
import { CHROMIUM, NGINX, obtainDebianProgram, PG_DUMP } from '../../tools/stack/debianPackages';
import { obtainJaeger } from '../../tools/stack/jaeger';
import { resolveDatabase, type ResolvedDatabase } from '../../tools/stack/postgres';
import { freePort } from '../../tools/stack/processes';
import { obtainTemporalCli } from '../../tools/stack/temporalCli';
import { startTemporalCluster } from '../../tools/stack/temporalCluster';
import { obtainTemporalClusterBinaries } from '../../tools/stack/temporalClusterBinaries';
import { pickClusterPorts } from '../../tools/stack/temporalClusterConfig';
import { temporalEngineKind } from '../../tools/stack/temporalEngine';
import {
  startTemporalDevServerOnFreePorts,
  type DevServer,
} from '../../tools/stack/temporalServer';
import { uniqueName } from './database';
import { dropStaleTestDatabases, publishHarness, ROOT, TEST_OUTPUT } from './harness';

declare global {
  // Handles for global teardown, which runs in the same process.
  var onejobTestServers:
    { temporal?: DevServer; database?: ResolvedDatabase; clusterDatabase?: string } | undefined;
}

/**
 * One real Temporal engine and one PostgreSQL server for the whole run: the dev server (in
 * memory, random ports), or with ONEJOB_TEMPORAL_ENGINE=cluster the Temporal server on
 * PostgreSQL (its own two databases, dropped at the end). Each test file then makes its own
 * database and task queue (see support/stack.ts). If anything cannot be had, the run fails
 * here, loudly; no test is skipped.
 */
export default async function globalSetup(): Promise<void> {
  const log = (line: string): void => console.log(`[test-setup] ${line}`);
  mkdirSync(TEST_OUTPUT, { recursive: true });
  globalThis.onejobTestServers = {};
  const engine = temporalEngineKind();

  const started = Date.now();
  // Debian's programs one after the other (apt holds a lock), while the rest gets going.
  const programs = (async () => ({
    chromiumPath: await obtainDebianProgram(CHROMIUM, log),
    nginxPath: await obtainDebianProgram(NGINX, log),
    pgDumpPath: await obtainDebianProgram(PG_DUMP, log),
  }))();
  programs.catch(() => undefined);
  const cli = await obtainTemporalCli(log);
  const jaegerPath = await obtainJaeger(log);
  // The cluster's programs are needed in every run: the server-restart test starts its own.
  const clusterBinaries = await obtainTemporalClusterBinaries(log, {
    withUi: engine === 'cluster',
  });
  const bundle = workflowBundle(log);
  bundle.catch(() => undefined);
  const database = await resolveDatabase({ stateDir: path.join(TEST_OUTPUT, 'state'), log });
  globalThis.onejobTestServers.database = database;
  const stale = await dropStaleTestDatabases(database.adminUrl);
  if (stale.length > 0) log(`dropped ${stale.length} databases left by killed runs`);

  let temporal: DevServer;
  if (engine === 'cluster') {
    const databaseName = uniqueName('onejob_test_temporal');
    globalThis.onejobTestServers.clusterDatabase = databaseName;
    temporal = await startTemporalCluster({
      binaries: clusterBinaries,
      adminDatabaseUrl: database.adminUrl,
      databaseName,
      dir: path.join(TEST_OUTPUT, 'temporal-cluster'),
      ports: await pickClusterPorts(),
      uiPort: await freePort(),
      log,
    });
    if (!temporal.uiUrl) throw new Error('the cluster started without its Web UI server');
  } else {
    temporal = await startTemporalDevServerOnFreePorts({
      cliPath: cli.path,
      logFile: path.join(TEST_OUTPUT, 'temporal-server.log'),
    });
  }
  globalThis.onejobTestServers.temporal = temporal;
  const { chromiumPath, nginxPath, pgDumpPath } = await programs;
  const workflowBundlePath = await bundle;

  publishHarness({
    temporalEngine: engine,
    temporalAddress: temporal.address,
    temporalUiUrl: temporal.uiUrl!,
    temporalCliPath: cli.path,
    clusterBinaries,
    adminDatabaseUrl: database.adminUrl,
    workflowBundlePath,
    chromiumPath,
    nginxPath,
    pgDumpPath,
    jaegerPath,
  });
  log(
    `temporal ${engine} engine at ${temporal.address}, PostgreSQL ${database.source}, ready in ${Date.now() - started} ms`,
  );
}

/** The newest modification time of any file under `dir`. */
function newestChange(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The workflow bundle for in-process workers: the one `npm run build` made (npm test builds
 * first), unless src changed after it (jest run by hand); then webpack bundles src here.
 */
async function workflowBundle(log: (line: string) => void): Promise<string> {
  // Where src/temporal/workflowBundle.ts puts it, seen from dist (this file runs from test/, under ts-jest).
  const builtBundle = builtProduct('temporal', 'workflow-bundle.js');
  let built = 0;
  try {
    built = statSync(builtBundle).mtimeMs;
  } catch {
    // not built
  }
  if (built > newestChange(path.join(ROOT, 'src'))) return builtBundle;
  log('the built workflow bundle is missing or older than src: bundling src/workflows');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'src', 'workflows'),
    logger: new DefaultLogger('WARN'),
  });
  const file = path.join(TEST_OUTPUT, `workflow-bundle-${process.pid}.js`);
  writeFileSync(file, code);
  return file;
}
