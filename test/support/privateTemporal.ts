import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../tools/stack/processes';
import { startTemporalCluster, type ClusterOptions } from '../../tools/stack/temporalCluster';
import { pickClusterPorts } from '../../tools/stack/temporalClusterConfig';
import { startTemporalDevServer, type DevServer } from '../../tools/stack/temporalServer';
import { uniqueName } from './database';
import { dropClusterDatabases, harness, TEST_OUTPUT } from './harness';

/**
 * A Temporal engine of one test's own, of the kind this run tests (the dev server with its state
 * in a file, or the Temporal server on PostgreSQL), that the test may kill and start again on
 * the same ports and the same state.
 */
export interface PrivateTemporal {
  address: string;
  /** The server's own Prometheus metrics (requests by operation, among others). */
  metricsUrl: string;
  /** SIGKILL of the server process itself: no shutdown, nothing flushed. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and state; resolves once it serves. */
  start(): Promise<void>;
  /** Stops it and removes its state. */
  stop(): Promise<void>;
}

/** The process the guardian runs (the server), by the kernel's list of the guardian's children. */
function guardedPid(server: DevServer): number {
  const guardian = server.process.child.pid!;
  const children = readFileSync(`/proc/${guardian}/task/${guardian}/children`, 'utf8').trim();
  const pid = Number(children.split(/\s+/)[0]);
  if (!pid) throw new Error(`the guardian ${guardian} runs no server`);
  return pid;
}

export async function startPrivateTemporal(name: string): Promise<PrivateTemporal> {
  const info = harness();
  const dir = path.join(TEST_OUTPUT, `${name}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  let launch: () => Promise<DevServer>;
  let cleanUp: () => Promise<void>;
  let metricsPort: number;
  if (info.temporalEngine === 'cluster') {
    const options: ClusterOptions = {
      binaries: info.clusterBinaries,
      adminDatabaseUrl: info.adminDatabaseUrl,
      databaseName: uniqueName(`onejob_test_${name.toLowerCase().replace(/[^a-z0-9]/g, '_')}`),
      dir,
      ports: await pickClusterPorts(),
    };
    metricsPort = options.ports.metrics!;
    launch = () => startTemporalCluster(options);
    cleanUp = () => dropClusterDatabases(info.adminDatabaseUrl, options.databaseName);
  } else {
    const ports = {
      port: await freePort(),
      httpPort: await freePort(),
      metricsPort: await freePort(),
    };
    metricsPort = ports.metricsPort;
    launch = () =>
      startTemporalDevServer({
        cliPath: info.temporalCliPath,
        ...ports,
        dbFilename: path.join(dir, 'temporal.sqlite'),
        logFile: path.join(dir, 'temporal-server.log'),
      });
    cleanUp = async () => undefined;
  }
  let server = await launch();
  return {
    address: server.address,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    async kill() {
      process.kill(guardedPid(server), 'SIGKILL');
      await server.process.exited;
    },
    async start() {
      server = await launch();
    },
    async stop() {
      await server.stop();
      await cleanUp();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
