import path from 'node:path';
import pg from 'pg';
import type { TemporalClusterBinaries } from '../../tools/stack/temporalClusterBinaries';
import type { TemporalEngineKind } from '../../tools/stack/temporalEngine';

/** What global setup hands to every test file (through the environment). */
export interface HarnessInfo {
  /** The engine this run tests on: the dev server, or the Temporal server on PostgreSQL. */
  temporalEngine: TemporalEngineKind;
  temporalAddress: string;
  /** The engine's Web UI, for the browser test. */
  temporalUiUrl: string;
  temporalCliPath: string;
  /** The production engine's programs, for tests that start a cluster of their own. */
  clusterBinaries: TemporalClusterBinaries;
  adminDatabaseUrl: string;
  workflowBundlePath: string;
  /** Debian's Chromium (the Web UI test) and nginx (the load-balancer test). */
  chromiumPath: string;
  nginxPath: string;
  /** pg_dump, for the schema snapshot. */
  pgDumpPath: string;
  /** Jaeger, for the tests that read traces back. */
  jaegerPath: string;
}

export const ROOT = path.resolve(__dirname, '..', '..');
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

/** The Jaeger binary global setup obtained. */
export function jaegerBinary(): string {
  return harness().jaegerPath;
}

/** Drops a test cluster's two databases (its server must be stopped). */
export async function dropClusterDatabases(adminUrl: string, databaseName: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (const name of [databaseName, `${databaseName}_visibility`]) {
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Drops databases that earlier runs left behind when they were killed: names made by uniqueName
 * (which carry their creation time) older than a day. Without FORCE, so a database some run
 * still uses is left alone.
 */
export async function dropStaleTestDatabases(adminUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const dropped: string[] = [];
  try {
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'onejob\\_test\\_%'",
    );
    for (const { datname } of rows) {
      const made = /_([0-9a-z]{6,10})_[0-9a-f]{6}(_visibility)?$/.exec(datname)?.[1];
      if (!made || Date.now() - parseInt(made, 36) < 24 * 3600 * 1000) continue;
      try {
        await client.query(`DROP DATABASE ${pg.escapeIdentifier(datname)}`);
        dropped.push(datname);
      } catch {
        // in use, or gone already
      }
    }
  } finally {
    await client.end();
  }
  return dropped;
}
