import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { apiConfig, serviceConfig, workerConfig } from '../src/config';
import { refusePublishedDevSecrets } from '../src/domain/publishedSecrets';
import { MAX_WORKFLOW_ID_LENGTH } from '../src/domain/workflowId';
import { providerConfigsFromEnv, simulatorProviders } from '../src/providers/registry';
import { obtainDebianProgram, PROMTOOL } from '../tools/stack/debianPackages';
import { NGINX_TEMPLATE } from '../tools/stack/nginx';
import {
  CLUSTER_RETENTION_MS,
  NAMESPACE_SCRIPT,
  SCHEMA_SCRIPT,
} from '../tools/stack/temporalCluster';
import {
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_SERVER_VERSION,
} from '../tools/stack/temporalClusterBinaries';
import {
  CLUSTER_NAMESPACE,
  clusterServerConfig,
  DYNAMIC_CONFIG,
  TIMER_MAX_TIME_SHIFT,
  HISTORY_SHARDS,
  pickClusterPorts,
} from '../tools/stack/temporalClusterConfig';
import { harness, ROOT } from './support/harness';

/**
 * Docker does not run here, so the compose file is checked against the code instead: every
 * variable a service needs is set, hosts and ports agree with what the app reads, and what it
 * publishes and requires makes a deployment fail closed.
 */
interface Service {
  image?: string;
  entrypoint?: string[];
  volumes?: string[];
  build?: unknown;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string; required?: boolean }>;
  healthcheck?: { test: string[] };
  restart?: string;
  user?: string;
  read_only?: boolean;
  tmpfs?: string[];
  security_opt?: string[];
  cap_drop?: string[];
  cap_add?: string[];
  deploy?: { resources?: { limits?: { cpus?: string; memory?: string } } };
}

const COMPOSE_TEXT = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');

/**
 * The file as compose reads it with the operator's variables `vars`: `${X}`, `${X:-default}`
 * and `${X:?message}` in every string value are filled in (`$$` stays, as compose's escape).
 * A required variable that is missing is listed in `refused`, as compose would refuse to start.
 */
function composeWith(vars: Record<string, string>): {
  services: Record<string, Service>;
  refused: string[];
} {
  const refused = new Set<string>();
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replace(
        /(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
        (_all, name: string, op: string | undefined, rest: string | undefined) => {
          const given = vars[name];
          const empty = given === undefined || (op?.startsWith(':') === true && given === '');
          if (!empty) return given;
          if (op?.endsWith('?')) {
            refused.add(name);
            return '';
          }
          return op?.endsWith('-') ? (rest ?? '') : '';
        },
      );
    if (Array.isArray(value)) return value.map(fill);
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  const parsed = parse(COMPOSE_TEXT, { merge: true }) as { services: Record<string, Service> };
  const services = fill(parsed.services) as Record<string, Service>;
  return { services, refused: [...refused].sort() };
}

/** What an operator must give; long random values, none of them a published dev secret. */
const OPERATOR_VARS: Record<string, string> = {
  ONEJOB_API_TOKENS: 'alice:alice-token-0123456789abcdef',
  ONEJOB_OPERATOR_TOKENS: 'ops:operator-token-0123456789abcdef',
  ONEJOB_METRICS_TOKEN: 'metrics-token-0123456789abcdef',
  POSTGRES_PASSWORD: 'superuser-password-0123456789',
  ONEJOB_DB_PASSWORD: 'app-password-0123456789',
  ONEJOB_OWNER_DB_PASSWORD: 'owner-password-0123456789',
  TEMPORAL_DB_PASSWORD: 'temporal-password-0123456789',
  ONEJOB_SECRET_KEYS: 'prod-1:q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=',
  ONEJOB_PROVIDERS: JSON.stringify(simulatorProviders('http://payments.example')),
};

const services = composeWith(OPERATOR_VARS).services;
const env = (name: string, from: Record<string, Service> = services): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(from[name]?.environment ?? {}).map(([k, v]) => [k, String(v)]));
const published = (from: Record<string, Service>): Array<[string, string]> =>
  Object.entries(from).flatMap(([name, service]) =>
    (service.ports ?? []).map((port): [string, string] => [name, port]),
  );

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

test('the stack has every part: PostgreSQL, Temporal on it, the Web UI, API, worker, the trace backend, and the simulator and Prometheus on request', () => {
  expect(Object.keys(services).sort()).toEqual([
    'api-1',
    'api-2',
    'jaeger',
    'migrate',
    'nginx',
    'postgres',
    'prometheus',
    'simulator',
    'temporal',
    'temporal-namespace',
    'temporal-schema',
    'temporal-ui',
    'worker',
  ]);
  // The images Temporal maintains: the server's, and admin-tools for its set-up steps.
  expect(services.temporal?.image).toMatch(/^temporalio\/server:/);
  for (const step of ['temporal-schema', 'temporal-namespace'])
    expect(services[step]?.image).toMatch(/^temporalio\/admin-tools:/);
  expect(services.temporal?.environment).toMatchObject({
    DB: 'postgres12',
    POSTGRES_SEEDS: 'postgres',
  });
  for (const name of ['api-1', 'api-2', 'worker']) {
    expect(services[name]?.command?.[1]).toBe(`dist/src/bin/${name.replace(/-\d$/, '')}.js`);
  }
  // The stand-in provider is a tool: its own image target, never the service's image.
  expect(services.simulator?.command?.[1]).toBe('dist/tools/simulator/main.js');
  expect(services.simulator?.build).toEqual({ context: '.', target: 'simulator' });
  for (const name of ['postgres', 'temporal', 'api-1', 'api-2', 'worker', 'simulator']) {
    expect(services[name]?.healthcheck?.test.length).toBeGreaterThan(0);
  }
  // The services send their spans to the trace backend unless told otherwise.
  for (const name of ['api-1', 'worker'])
    expect(env(name).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://jaeger:4318');
  // The stand-in provider runs only when asked for, and nothing needs it to start.
  expect(services.simulator?.profiles).toEqual(['simulator']);
  expect(services.worker?.depends_on?.simulator?.required).toBe(false);
  // So does Prometheus, and nothing waits for it.
  expect(services.prometheus?.profiles).toEqual(['monitoring']);
  for (const [name, service] of Object.entries(services))
    expect([name, Object.keys(service.depends_on ?? {})]).not.toContainEqual(['prometheus']);
});

test("the monitoring profile's Prometheus loads onejob's alert rules and scrapes both API replicas and the worker with the metrics token, and promtool accepts its configuration", async () => {
  const prometheus = services.prometheus!;
  const folder = path.join(ROOT, 'deploy', 'prometheus');
  const configFile = prometheus.command?.find((arg) => arg.startsWith('--config.file='));
  const mounted = inContainer(prometheus, path.join(folder, 'prometheus.yml'));
  expect(configFile).toBe(`--config.file=${mounted}`);
  const config = parse(readFileSync(path.join(folder, 'prometheus.yml'), 'utf8')) as {
    rule_files: string[];
    scrape_configs: Array<{
      job_name: string;
      authorization?: { credentials_file: string };
      static_configs: Array<{ targets: string[] }>;
    }>;
  };
  expect(config.rule_files).toEqual(['onejob-alerts.yml']);
  const targets = Object.fromEntries(
    config.scrape_configs.map((job) => [
      job.job_name,
      job.static_configs.flatMap((c) => c.targets),
    ]),
  );
  // Every process that exports onejob's metrics, where its environment says it serves them.
  const apiPort = env('api-1').PORT;
  expect(targets['onejob-api']).toEqual([`api-1:${apiPort}`, `api-2:${apiPort}`]);
  const healthPort = env('worker').ONEJOB_WORKER_HEALTH_ADDRESS!.split(':')[1];
  expect(targets['onejob-worker']).toEqual([`worker:${healthPort}`]);
  // /metrics answers only the metrics token: the compose secret made from ONEJOB_METRICS_TOKEN.
  const raw = parse(COMPOSE_TEXT, { merge: true }) as {
    secrets: Record<string, { environment?: string }>;
    services: Record<string, { secrets?: string[] }>;
  };
  expect(raw.secrets.metrics_token).toEqual({ environment: 'ONEJOB_METRICS_TOKEN' });
  expect(raw.services.prometheus?.secrets).toEqual(['metrics_token']);
  for (const job of config.scrape_configs.filter((j) => j.job_name !== 'onejob-worker-sdk'))
    expect([job.job_name, job.authorization]).toEqual([
      job.job_name,
      { credentials_file: '/run/secrets/metrics_token' },
    ]);
  // promtool checks the configuration and the rules it loads, with the secret's file present.
  const scratch = mkdtempSync(path.join(tmpdir(), 'onejob-prometheus-'));
  writeFileSync(path.join(scratch, 'metrics_token'), 'a-token-for-the-check\n');
  cpSync(path.join(folder, 'onejob-alerts.yml'), path.join(scratch, 'onejob-alerts.yml'));
  writeFileSync(
    path.join(scratch, 'prometheus.yml'),
    readFileSync(path.join(folder, 'prometheus.yml'), 'utf8').replaceAll(
      '/run/secrets/metrics_token',
      path.join(scratch, 'metrics_token'),
    ),
  );
  const promtool = await obtainDebianProgram(PROMTOOL, () => undefined);
  const checked = await promisify(execFile)(promtool, ['check', 'config', 'prometheus.yml'], {
    cwd: scratch,
  });
  expect(checked.stdout).toMatch(/SUCCESS: 1 rule files found/);
  expect(checked.stdout).toMatch(/SUCCESS: \d+ rules found/);
});

describe('a deployment from docker-compose.yml fails closed', () => {
  test("only the API (through nginx), the Web UI, the trace UI and Prometheus's UI are published, on 127.0.0.1 unless the operator says otherwise", () => {
    expect(published(services)).toEqual([
      ['temporal-ui', '127.0.0.1:8233:8080'],
      ['jaeger', '127.0.0.1:16686:16686'],
      ['prometheus', '127.0.0.1:9090:9090'],
      ['nginx', '127.0.0.1:3000:3000'],
    ]);
    const chosen = composeWith({
      ...OPERATOR_VARS,
      ONEJOB_PUBLISH_ADDRESS: '0.0.0.0',
      ONEJOB_PUBLISH_PORT: '80',
    }).services;
    expect(published(chosen)).toContainEqual(['nginx', '0.0.0.0:80:3000']);
    // Never Temporal's frontend (no TLS, no authorizer), the worker's metrics or health, a
    // replica, or Jaeger's OTLP receiver (anyone could write traces).
    for (const [, port] of published(chosen)) expect(port).not.toMatch(/:(7233|9464|9465|4318)$/);
  });

  test('the Web UI is read-only unless an operator turns write actions on', () => {
    expect(env('temporal-ui').TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
    const writable = composeWith({ ...OPERATOR_VARS, TEMPORAL_UI_DISABLE_WRITE_ACTIONS: 'false' });
    expect(env('temporal-ui', writable.services).TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('false');
  });

  test('every secret must be given: compose refuses to start without it, and none has a default', () => {
    expect(composeWith({}).refused).toEqual([
      'ONEJOB_API_TOKENS',
      'ONEJOB_DB_PASSWORD',
      'ONEJOB_METRICS_TOKEN',
      'ONEJOB_OPERATOR_TOKENS',
      'ONEJOB_OWNER_DB_PASSWORD',
      'ONEJOB_SECRET_KEYS',
      'POSTGRES_PASSWORD',
      'TEMPORAL_DB_PASSWORD',
    ]);
    expect(composeWith(OPERATOR_VARS).refused).toEqual([]);
    // Every secret setting is `${VAR:?...}`, or empty unless given (the simulator's callback
    // secret, only for --profile simulator); never a default value.
    const raw = parse(COMPOSE_TEXT, { merge: true }) as { services: Record<string, Service> };
    for (const [name, service] of Object.entries(raw.services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        if (!/TOKEN|PASSWORD|PWD|SECRET/.test(key)) continue;
        expect([name, key, String(value)]).toEqual([
          name,
          key,
          expect.stringMatching(/^\$\{[A-Z0-9_]+(:\?[^}]+|:-)\}$/),
        ]);
      }
    }
    for (const secret of [
      'onejob-dev-token',
      'onejob-dev-operator-token',
      'onejob-dev-metrics-token',
    ])
      expect(COMPOSE_TEXT).not.toContain(secret);
  });

  test('no shared superuser: the application and Temporal each connect as their own role', () => {
    const superuser = String(services.postgres!.environment!.POSTGRES_USER);
    for (const name of ['api-1', 'api-2', 'worker']) {
      const url = new URL(env(name).DATABASE_URL!);
      expect(url.username).toBe('onejob');
      expect(url.password).toBe(OPERATOR_VARS.ONEJOB_DB_PASSWORD);
    }
    expect(services.temporal!.environment).toMatchObject({
      POSTGRES_USER: 'temporal',
      POSTGRES_PWD: OPERATOR_VARS.TEMPORAL_DB_PASSWORD,
    });
    expect(services['temporal-schema']!.environment).toMatchObject({
      SQL_USER: 'temporal',
      SQL_PASSWORD: OPERATOR_VARS.TEMPORAL_DB_PASSWORD,
    });
    expect(['onejob', 'temporal']).not.toContain(superuser);
    // The roles are made once, by the script the official image runs at initialisation.
    const init = services.postgres!.volumes!.find((v) =>
      v.includes('/docker-entrypoint-initdb.d/'),
    );
    const script = readFileSync(path.join(ROOT, init!.split(':')[0]!), 'utf8');
    expect(script).toMatch(/CREATE ROLE onejob LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE/);
    expect(script).toMatch(/CREATE DATABASE onejob OWNER onejob_owner;/);
    expect(script).toMatch(/CREATE ROLE onejob_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE/);
    expect(script).toMatch(/CREATE ROLE temporal LOGIN NOSUPERUSER CREATEDB NOCREATEROLE/);
    expect(script).not.toMatch(/SUPERUSER(?<!NOSUPERUSER)/);
  });

  test('the schema is changed only by the migrate step, as its owner; the API and the worker wait for it and connect as a role that reads and writes rows, checking the schema', () => {
    const migrate = services.migrate!;
    expect(migrate.command).toEqual(['node', 'dist/src/bin/migrate.js']);
    expect(new URL(String(migrate.environment!.DATABASE_URL)).username).toBe('onejob_owner');
    for (const name of ['api-1', 'api-2', 'worker']) {
      expect(env(name).ONEJOB_MIGRATIONS).toBe('verify');
      expect(new URL(env(name).DATABASE_URL!).username).toBe('onejob');
      expect(services[name]!.depends_on).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
      });
    }
    // The grants compose's PostgreSQL makes at initialisation are the file the tests run.
    const mounted = services.postgres!.volumes!.find((v) => v.includes('app-role.sql'));
    expect(mounted).toBe('./deploy/postgres/app-role.sql:/etc/onejob/postgres/app-role.sql:ro');
    const script = readFileSync(path.join(ROOT, 'deploy/postgres/create-roles.sh'), 'utf8');
    expect(script).toContain(
      '-v owner_role=onejob_owner -v app_role=onejob -f /etc/onejob/postgres/app-role.sql',
    );
  });

  test('images are pinned to supported versions: no untagged or latest image, Node on its LTS line', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue;
      expect([name, service.image]).toEqual([name, expect.stringMatching(/^[^:]+:v?\d[\w.-]*$/)]);
    }
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toMatch(/^node:24-/);
  });
});

test('the API and the worker get every variable their config requires, it parses, and they would start', () => {
  expect(() => serviceConfig(env('worker'))).not.toThrow();
  for (const name of ['worker', 'api-1']) {
    const configs = providerConfigsFromEnv(env(name));
    expect(() => refusePublishedDevSecrets(env(name), configs)).not.toThrow();
  }
  const api = apiConfig(env('api-1'));
  expect(api.host).toBe('0.0.0.0');
  expect(api.metricsToken).toBe(OPERATOR_VARS.ONEJOB_METRICS_TOKEN);
  // Fair shares hold from the first start: every owner has a create bucket, an open-jobs cap
  // and a bucket of webhook requests.
  expect(api.ownerLimits.defaults).toEqual({
    creates: { perSecond: 20, burst: 100 },
    maxOpenJobs: 5000,
    webhookRequests: { perSecond: 20, burst: 200 },
  });
  expect(env('api-2')).toEqual(env('api-1'));
  // nginx publishes the API and balances over both replicas, on the port they listen on.
  const lb = env('nginx');
  expect(lb.ONEJOB_API_UPSTREAMS).toBe(`server api-1:${api.port}; server api-2:${api.port};`);
  expect(services.nginx?.ports?.[0]).toMatch(new RegExp(`:${lb.ONEJOB_LB_LISTEN}$`));
  expect(lb.ONEJOB_LB_BALANCE).toBe('hash $$http_idempotency_key consistent;');
  // Without providers the services refuse to start; with the simulator named, they use it.
  const unset = composeWith({ ...OPERATOR_VARS, ONEJOB_PROVIDERS: '' }).services;
  expect(() => providerConfigsFromEnv(env('worker', unset))).toThrow(/ONEJOB_PROVIDERS is not set/);
  const simulated = composeWith({
    ...OPERATOR_VARS,
    ONEJOB_PROVIDERS: '',
    ONEJOB_SIMULATOR_URL: `http://simulator:${services.simulator!.environment!.SIMULATOR_PORT}`,
  }).services;
  expect(providerConfigsFromEnv(env('worker', simulated))[0]?.name).toBe('simulator');
});

test("the API replicas and the worker are checked for readiness by the image's own health check, which the Dockerfile runs too, and nginx waits for both replicas", () => {
  const check = ['CMD', 'node', 'dist/src/bin/healthcheck.js'];
  for (const name of ['api-1', 'api-2', 'worker'])
    expect(services[name]!.healthcheck!.test).toEqual(check);
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const service = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  expect(service).toMatch(
    /^HEALTHCHECK .*\\\n\s+CMD \["node", "dist\/src\/bin\/healthcheck\.js"\]$/m,
  );
  // The check asks on loopback at the port each service listens on.
  expect(workerConfig(env('worker')).healthAddress).toMatch(/^0\.0\.0\.0:\d+$/);
  expect(apiConfig(env('api-1')).host).toBe('0.0.0.0');
  expect(services.nginx!.depends_on).toEqual({
    'api-1': { condition: 'service_healthy' },
    'api-2': { condition: 'service_healthy' },
  });
});

test('hosts and ports agree across services', () => {
  for (const name of ['api-1', 'api-2', 'worker']) {
    const url = new URL(env(name).DATABASE_URL!);
    expect(url.hostname).toBe('postgres');
    expect(url.pathname).toBe('/onejob');
    expect(env(name).TEMPORAL_ADDRESS).toBe('temporal:7233');
    // Temporal's server answers and the namespace they run in exists.
    expect(services[name]!.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      'temporal-namespace': { condition: 'service_completed_successfully' },
    });
    expect(env(name).TEMPORAL_NAMESPACE).toBe(env('temporal-namespace').TEMPORAL_NAMESPACE);
  }
  expect(services['temporal-ui']!.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
  expect(services.postgres!.healthcheck!.test.join(' ')).toContain('-d onejob');
});

describe('docker-compose.yml and cluster mode run the same production engine', () => {
  test('the same server version, and the Web UI version that cluster mode builds', () => {
    expect(services.temporal?.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    // The set-up steps run the SQL tool and CLI of the same server version.
    for (const step of ['temporal-schema', 'temporal-namespace'])
      expect(services[step]?.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-ui']?.image).toBe(`temporalio/ui:${TEMPORAL_UI_SERVER_VERSION}`);
  });

  test('the same schema steps: the one script, against the same PostgreSQL 12 schemas, before the server starts', () => {
    const schema = services['temporal-schema']!;
    // POSIX sh, as cluster mode runs it too: admin-tools is a small image.
    expect(schema.entrypoint).toEqual(['sh', inContainer(schema, SCHEMA_SCRIPT)]);
    expect(schema.environment).toMatchObject({
      TEMPORAL_SCHEMA_DIR: '/etc/temporal/schema/postgresql/v12',
      TEMPORAL_DB: services.temporal!.environment!.DBNAME,
      TEMPORAL_VISIBILITY_DB: services.temporal!.environment!.VISIBILITY_DBNAME,
      SQL_HOST: services.temporal!.environment!.POSTGRES_SEEDS,
    });
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
    expect(dynamic['frontend.enableUpdateWorkflowExecution']?.[0]?.value).toBe(true);
    // Operators may pause a job's workflow; onejob answers actions on it (issue 61).
    expect(dynamic['frontend.WorkflowPauseEnabled']?.[0]?.value).toBe(true);
    // Sub-second timers (hedge delays) fire on time, on the dev server too (issue 62).
    expect(dynamic['history.timerProcessorMaxTimeShift']?.[0]?.value).toBe(TIMER_MAX_TIME_SHIFT);
  });

  test("the namespace step registers cluster mode's namespace with its retention, on a real server, and does nothing the second time", async () => {
    const step = services['temporal-namespace']!;
    expect(step.entrypoint).toEqual(['sh', inContainer(step, NAMESPACE_SCRIPT)]);
    expect(step.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    expect(env('temporal-namespace')).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: CLUSTER_NAMESPACE,
      NAMESPACE_RETENTION: `${CLUSTER_RETENTION_MS / 3_600_000}h`,
    });

    // The script itself, with the CLI global setup obtained, against this run's server.
    const { temporalCliPath, temporalAddress } = harness();
    const namespace = `compose-check-${Date.now().toString(36)}`;
    const run = () =>
      promisify(execFile)('sh', [NAMESPACE_SCRIPT], {
        env: {
          ...process.env,
          ...env('temporal-namespace'),
          PATH: `${path.dirname(temporalCliPath)}:${process.env.PATH}`,
          TEMPORAL_ADDRESS: temporalAddress,
          TEMPORAL_NAMESPACE: namespace,
        },
      });
    await run();
    const described = JSON.parse(
      (
        await promisify(execFile)(temporalCliPath, [
          ...['operator', 'namespace', 'describe', '--namespace', namespace],
          ...['--address', temporalAddress, '--output', 'json'],
        ])
      ).stdout,
    ) as { config: { workflowExecutionRetentionTtl: string } };
    expect(described.config.workflowExecutionRetentionTtl).toBe(`${CLUSTER_RETENTION_MS / 1000}s`);
    expect((await run()).stdout).toContain(`namespace ${namespace} exists`);
  });
});

describe('every container runs hardened: it restarts, is bounded, gains no privilege and cannot change its own image', () => {
  /** The set-up steps: run once to completion before what depends on them. */
  const oneShot = new Set(
    Object.values(services).flatMap((service) =>
      Object.entries(service.depends_on ?? {})
        .filter(([, dependency]) => dependency.condition === 'service_completed_successfully')
        .map(([name]) => name),
    ),
  );

  test('a long-running service restarts unless an operator stopped it; a set-up step only when it failed, a few times', () => {
    expect([...oneShot].sort()).toEqual(['migrate', 'temporal-namespace', 'temporal-schema']);
    for (const [name, service] of Object.entries(services))
      expect([name, service.restart]).toEqual([
        name,
        oneShot.has(name) ? expect.stringMatching(/^on-failure:[1-9]$/) : 'unless-stopped',
      ]);
  });

  test('each has a memory and a CPU limit, and none asks for more than the two CPUs the stack needs', () => {
    const bytes = { M: 2 ** 20, G: 2 ** 30 } as const;
    let memory = 0;
    for (const [name, service] of Object.entries(services)) {
      const limits = service.deploy?.resources?.limits;
      expect([name, limits?.memory]).toEqual([name, expect.stringMatching(/^\d+[MG]$/)]);
      const cpus = Number(limits?.cpus);
      expect([name, cpus > 0 && cpus <= 2]).toEqual([name, true]);
      if (!service.profiles)
        memory +=
          Number(limits!.memory!.slice(0, -1)) * bytes[limits!.memory!.slice(-1) as 'M' | 'G'];
    }
    // What docs/operators.md says the stack's limits add up to (without the simulator).
    expect(memory / 2 ** 30).toBeLessThanOrEqual(6);
  });

  test('no process gains a privilege: no-new-privileges, every capability dropped, only what an image needs added back', () => {
    // nginx's master starts as root: it makes its temporary folders for the workers' user
    // (CHOWN) and becomes that user in each worker (SETUID, SETGID). It listens above 1024.
    // Everything else starts as a user of its image, PostgreSQL too, and needs none.
    const needs: Record<string, string[]> = { nginx: ['CHOWN', 'SETGID', 'SETUID'] };
    for (const [name, service] of Object.entries(services)) {
      expect([name, service.security_opt]).toEqual([name, ['no-new-privileges:true']]);
      expect([name, service.cap_drop]).toEqual([name, ['ALL']]);
      expect([name, service.cap_add ?? []]).toEqual([name, needs[name] ?? []]);
    }
    expect(services.postgres?.user).toBe('postgres');
  });

  test('every root filesystem is read-only; each service writes only to its volume and the tmpfs it is given', () => {
    const writes: Record<string, string[]> = {
      // The server's socket and lock file; its data is the postgres-data volume.
      postgres: ['/var/run/postgresql', '/tmp'],
      // The official image renders its templates into conf.d, and nginx keeps its pid and the
      // bodies it buffers.
      nginx: ['/etc/nginx/conf.d', '/var/cache/nginx', '/run', '/tmp'],
    };
    for (const [name, service] of Object.entries(services)) {
      expect([name, service.read_only]).toEqual([name, true]);
      const mounted = (service.tmpfs ?? []).map((entry) => entry.split(':')[0]);
      expect([name, mounted]).toEqual([name, writes[name] ?? ['/tmp']]);
    }
    // The socket folder belongs to the image's postgres user (uid 999), as the image makes it.
    expect(services.postgres?.tmpfs?.[0]).toMatch(/^\/var\/run\/postgresql:.*uid=999,gid=999/);
  });

  test('nginx names no version and limits each client address on the API, answering 429 as problem+json', () => {
    const template = readFileSync(NGINX_TEMPLATE, 'utf8');
    expect(template).toMatch(/^server_tokens off;$/m);
    expect(template).toMatch(
      /^limit_req_zone \$binary_remote_addr zone=onejob_api:\d+m rate=\$\{ONEJOB_LB_RATE\};$/m,
    );
    const api = template.slice(template.indexOf('location /v1/ {'));
    expect(api.slice(0, api.indexOf('\n    }'))).toMatch(
      /limit_req zone=onejob_api burst=\$\{ONEJOB_LB_BURST\} nodelay;[^]*limit_req_status 429;/,
    );
    const lb = env('nginx');
    expect(lb.ONEJOB_LB_RATE).toBe('100r/s');
    expect(Number(lb.ONEJOB_LB_BURST)).toBeGreaterThanOrEqual(100);
    // Every variable the template names is one compose gives it.
    for (const [, name] of template.matchAll(/\$\{([A-Z0-9_]+)\}/g))
      expect(lb).toHaveProperty(name!);
  });
});
