import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { apiConfig, serviceConfig } from '../src/config';
import { SCHEMA_SCRIPT } from '../src/dev/temporalCluster';
import {
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_SERVER_VERSION,
} from '../src/dev/temporalClusterBinaries';
import {
  clusterServerConfig,
  DYNAMIC_CONFIG,
  HISTORY_SHARDS,
  pickClusterPorts,
} from '../src/dev/temporalClusterConfig';
import { MAX_WORKFLOW_ID_LENGTH } from '../src/domain/workflowId';
import { ROOT } from './harness';

/**
 * Docker does not run here, so the compose file is checked against the code instead: every
 * variable a service needs is set, and hosts and ports agree with what the app reads.
 */
interface Service {
  image?: string;
  entrypoint?: string[];
  volumes?: string[];
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), {
  merge: true,
}) as {
  services: Record<string, Service>;
};
const services = compose.services;
const env = (name: string): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [k, String(v)]),
  );

test('the stack has every part: PostgreSQL, Temporal on it, the Web UI, API, worker and simulator', () => {
  expect(Object.keys(services).sort()).toEqual([
    'api-1',
    'api-2',
    'nginx',
    'postgres',
    'simulator',
    'temporal',
    'temporal-schema',
    'temporal-ui',
    'worker',
  ]);
  expect(services.temporal?.image).toMatch(/^temporalio\/auto-setup:/);
  expect(services.temporal?.environment).toMatchObject({
    DB: 'postgres12',
    POSTGRES_SEEDS: 'postgres',
  });
  for (const name of ['api-1', 'api-2', 'worker', 'simulator']) {
    expect(services[name]?.command?.[1]).toBe(`dist/bin/${name.replace(/-\d$/, '')}.js`);
  }
  for (const name of ['postgres', 'temporal', 'api-1', 'api-2', 'simulator']) {
    expect(services[name]?.healthcheck?.test.length).toBeGreaterThan(0);
  }
});

test('the API and the worker get every variable their config requires, and it parses', () => {
  expect(() => serviceConfig(env('worker'))).not.toThrow();
  expect(services.worker?.ports).toContain(
    `${env('worker').ONEJOB_WORKER_METRICS_ADDRESS!.split(':')[1]}:9464`,
  );
  const api = apiConfig(env('api-1'));
  expect(api.host).toBe('0.0.0.0');
  expect(env('api-2')).toEqual(env('api-1'));
  // nginx publishes the API and balances over both replicas, on the port they listen on.
  const lb = env('nginx');
  expect(lb.ONEJOB_API_UPSTREAMS).toBe(`server api-1:${api.port}; server api-2:${api.port};`);
  expect(services.nginx?.ports).toContain(`${lb.ONEJOB_LB_LISTEN}:${lb.ONEJOB_LB_LISTEN}`);
  expect(lb.ONEJOB_LB_BALANCE).toBe('hash $$http_idempotency_key consistent;');
});

test('hosts and ports agree across services', () => {
  const postgres = services.postgres!.environment!;
  for (const name of ['api-1', 'api-2', 'worker']) {
    const url = new URL(env(name).DATABASE_URL!);
    expect(url.hostname).toBe('postgres');
    expect(url.username).toBe(postgres.POSTGRES_USER);
    expect(url.password).toBe(postgres.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${postgres.POSTGRES_DB}`);
    expect(env(name).TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env(name).ONEJOB_SIMULATOR_URL).toBe(
      `http://simulator:${services.simulator!.environment!.SIMULATOR_PORT}`,
    );
    expect(services[name]!.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      temporal: { condition: 'service_healthy' },
    });
  }
  expect(services['temporal-ui']!.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
  expect(services['temporal-ui']!.ports).toContain('8233:8080');
  expect(services.temporal!.environment!.POSTGRES_USER).toBe(
    services.postgres!.environment!.POSTGRES_USER,
  );
  expect(services.temporal!.environment!.POSTGRES_PWD).toBe(
    services.postgres!.environment!.POSTGRES_PASSWORD,
  );
});

describe('docker-compose.yml and cluster mode run the same production engine', () => {
  /** Where a file of the repository appears inside a service's container, by its volumes. */
  function inContainer(service: Service, file: string): string | undefined {
    for (const volume of service.volumes ?? []) {
      const [source, target] = volume.split(':');
      const hostDir = path.resolve(ROOT, source!);
      if (file.startsWith(`${hostDir}${path.sep}`))
        return path.posix.join(target!, path.relative(hostDir, file));
    }
    return undefined;
  }

  test('the same server version, and the Web UI version that cluster mode builds', () => {
    expect(services.temporal?.image).toBe(`temporalio/auto-setup:${TEMPORAL_SERVER_VERSION}`);
    // The schema step runs the SQL tool of the same server version.
    expect(services['temporal-schema']?.image).toBe(
      `temporalio/auto-setup:${TEMPORAL_SERVER_VERSION}`,
    );
    expect(services['temporal-ui']?.image).toBe(`temporalio/ui:${TEMPORAL_UI_SERVER_VERSION}`);
  });

  test('the same schema steps: the one script, against the same PostgreSQL 12 schemas, before the server starts', () => {
    const schema = services['temporal-schema']!;
    expect(schema.entrypoint).toEqual(['bash', inContainer(schema, SCHEMA_SCRIPT)]);
    expect(schema.environment).toMatchObject({
      TEMPORAL_SCHEMA_DIR: '/etc/temporal/schema/postgresql/v12',
      TEMPORAL_DB: services.temporal!.environment!.DBNAME,
      TEMPORAL_VISIBILITY_DB: services.temporal!.environment!.VISIBILITY_DBNAME,
      SQL_HOST: services.temporal!.environment!.POSTGRES_SEEDS,
    });
    // The server's own image must not set the schema up its own way.
    expect(services.temporal!.environment!.SKIP_SCHEMA_SETUP).toBe('true');
    expect(services.temporal!.depends_on).toMatchObject({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
  });

  test('the same dynamic configuration file and history shard count', async () => {
    const temporal = services.temporal!;
    expect(temporal.environment!.DYNAMIC_CONFIG_FILE_PATH).toBe(
      inContainer(temporal, DYNAMIC_CONFIG),
    );
    expect(Number(temporal.environment!.NUM_HISTORY_SHARDS)).toBe(HISTORY_SHARDS);
    const generated = parse(
      clusterServerConfig(
        { databaseName: 'temporal', ports: await pickClusterPorts() },
        { host: 'h', port: 5432, user: 'u', password: 'p' },
      ),
    ) as {
      persistence: { numHistoryShards: number };
      dynamicConfigClient: { filepath: string };
    };
    expect(generated.dynamicConfigClient.filepath).toBe(DYNAMIC_CONFIG);
    expect(generated.persistence.numHistoryShards).toBe(HISTORY_SHARDS);
    // The file says what our ids rely on.
    const dynamic = parse(readFileSync(DYNAMIC_CONFIG, 'utf8')) as Record<
      string,
      Array<{ value: unknown }>
    >;
    expect(dynamic['limit.maxIDLength']?.[0]?.value).toBe(MAX_WORKFLOW_ID_LENGTH);
    expect(dynamic['frontend.enableExecuteMultiOperation']?.[0]?.value).toBe(true);
  });
});
