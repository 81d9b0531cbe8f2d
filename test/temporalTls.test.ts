import { Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTemporalCluster, type TemporalCluster } from '../tools/stack/temporalCluster';
import { pickClusterPorts, type ClusterTls } from '../tools/stack/temporalClusterConfig';
import { uniqueName } from './support/database';
import { dropClusterDatabases, harness, TEST_OUTPUT } from './support/harness';
import { createJob, untilJob } from './support/jobs';
import { startTestStack, type TestStack } from './support/stack';
import { untilWorkflowClosed } from './support/temporal';

/**
 * The settings documented for Temporal Cloud and TLS clusters, used for real: the production
 * engine's frontend requires client certificates (mutual TLS), and the API process, the worker
 * process and the test's own client reach it through TEMPORAL_TLS_* alone.
 */
const SERVER_NAME = 'temporal.onejob.test';
const dir = path.join(TEST_OUTPUT, uniqueName('tls'));

/** A private CA and two certificates it signs, made with openssl. */
function makeCertificates(): ClusterTls {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=onejob test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const sign = (name: string, extensions: string) => {
    writeFileSync(file(`${name}.ext`), extensions);
    openssl(
      'req',
      ...ec,
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
      '-subj',
      `/CN=${name}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
    );
  };
  sign('server', `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  sign('client', 'extendedKeyUsage=clientAuth\n');
  return {
    caFile: file('ca.pem'),
    serverCertFile: file('server.pem'),
    serverKeyFile: file('server.key'),
    clientCertFile: file('client.pem'),
    clientKeyFile: file('client.key'),
    serverName: SERVER_NAME,
  };
}

let tls: ClusterTls;
let cluster: TemporalCluster;
let stack: TestStack;
const databaseName = uniqueName('onejob_test_tls');

beforeAll(async () => {
  tls = makeCertificates();
  cluster = await startTemporalCluster({
    binaries: harness().clusterBinaries,
    adminDatabaseUrl: harness().adminDatabaseUrl,
    databaseName,
    dir,
    ports: await pickClusterPorts(),
    tls,
  });
  stack = await startTestStack({
    temporalAddress: cluster.address,
    workerProcess: true,
    env: {
      TEMPORAL_TLS_CLIENT_CERT_PATH: tls.clientCertFile,
      TEMPORAL_TLS_CLIENT_KEY_PATH: tls.clientKeyFile,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caFile,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    },
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await cluster?.stop();
  await dropClusterDatabases(harness().adminDatabaseUrl, databaseName);
});

async function answers(options: Parameters<typeof Connection.connect>[0]): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ ...options, connectTimeout: 3_000 });
    await connection.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

test('the frontend refuses a client without TLS, and one without a client certificate', async () => {
  expect(await answers({ address: cluster.address })).toBe(false);
  expect(
    await answers({
      address: cluster.address,
      tls: { serverRootCACertificate: readFileSync(tls.caFile), serverNameOverride: SERVER_NAME },
    }),
  ).toBe(false);
});

test('with TEMPORAL_TLS_* set, the API and the worker run a job on the mTLS cluster', async () => {
  const job = await createJob(stack, {
    type: 'summarize',
    input: { text: 'Over mutual TLS. The same job, the same record.' },
  });
  const done = await untilJob(stack, job.id, (j) => j.status === 'succeeded');
  expect(done.completedBy).toBe(`${job.id}:1`);
  // The test's own client reaches the workflow through the same settings.
  expect(await untilWorkflowClosed(stack, job.workflowId)).toBe('COMPLETED');
});
