import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker } from '@temporalio/worker';
import pg from 'pg';
import { buildApi, type Api } from '../src/api/app';
import { ApiTokens } from '../src/api/auth';
import { migrate } from '../src/db/migrate';
import { createPool, type Pool } from '../src/db/pool';
import { withDatabase } from '../src/dev/postgres';
import { createLogger } from '../src/logger';
import { ProviderRegistry, providerConfigsFromEnv } from '../src/providers/registry';
import { startSimulator, type SimulatorServer } from '../src/simulator/server';
import { createJobWorker } from '../src/worker';
import { harness } from './harness';

// Keep the SDK's own logging to warnings so test output stays readable.
let runtimeInstalled = false;
function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier file in the same process.
  }
}

export const TEST_OWNER = 'owner-a@example.com';
export const TEST_TOKEN = 'token-owner-a-0001';
export const OTHER_OWNER = 'org/team:b';
export const OTHER_TOKEN = 'token-owner-b-0002';

function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** A fresh database with every migration applied; dropped by the returned function. */
export async function createTestDatabase(): Promise<{
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}> {
  const { adminDatabaseUrl } = harness();
  const name = uniqueName('onejob_test');
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  const url = withDatabase(adminDatabaseUrl, name);
  const pool = createPool(url);
  await migrate(pool);
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: adminDatabaseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestStack {
  apiUrl: string;
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  simulator: SimulatorServer;
  api: Api;
  worker: Worker;
  /** fetch against the API with an owner's token. */
  request(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; token?: string },
  ): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * The real system for one test file: its own database and task queue on the shared Temporal
 * server, a real worker, the real API on a random port, and the provider simulator.
 */
export async function startTestStack(): Promise<TestStack> {
  quietTemporalRuntime();
  const info = harness();
  const database = await createTestDatabase();
  const taskQueue = uniqueName('onejob-test');
  const simulator = await startSimulator();
  const logger = createLogger('onejob-test', process.env.LOG_LEVEL ?? 'silent');
  const providers = new ProviderRegistry(
    providerConfigsFromEnv({ ONEJOB_SIMULATOR_URL: simulator.url }),
  );

  const nativeConnection = await NativeConnection.connect({ address: info.temporalAddress });
  const worker = await createJobWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    pool: database.pool,
    providers,
    logger,
    workflowBundle: { codePath: info.workflowBundlePath },
  });
  const workerRun = worker.run();

  const connection = await Connection.connect({ address: info.temporalAddress });
  const temporal = new Client({ connection, namespace: 'default' });
  const api = await buildApi({
    pool: database.pool,
    temporal,
    taskQueue,
    providers,
    logger,
    tokens: ApiTokens.parse(`${TEST_OWNER}:${TEST_TOKEN},${OTHER_OWNER}:${OTHER_TOKEN}`),
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const address = api.server.address();
  const apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  return {
    apiUrl,
    pool: database.pool,
    temporal,
    taskQueue,
    simulator,
    api,
    worker,
    request(method, path, options = {}) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.token ?? TEST_TOKEN}`,
        ...options.headers,
      };
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      return fetch(`${apiUrl}${path}`, { method, headers, body });
    },
    async stop() {
      await api.close();
      worker.shutdown();
      await workerRun;
      await nativeConnection.close();
      await connection.close();
      await simulator.close();
      await database.drop();
    },
  };
}
