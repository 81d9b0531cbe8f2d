import { Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
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

/** Whether the frontend answers a client with these settings, or the error it was refused with. */
async function answers(options: Parameters<typeof Connection.connect>[0]): Promise<true | string> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ ...options, connectTimeout: 3_000 });
    await connection.workflowService.getSystemInfo({});
    return true;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

const where = () => {
  const [host, port] = cluster.address.split(':');
  return { host: host!, port: Number(port) };
};

/** What a plaintext HTTP/2 client (the SDK without TLS) sends first: the preface, then SETTINGS. */
const H2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

/**
 * What the frontend does with a plaintext HTTP/2 client: whether it accepted the connection,
 * what it sent back, and how the connection ended. The SDK says only "Failed to connect before
 * the deadline", as it does for a port where nothing listens; the wire says which.
 */
function plaintextExchange(): Promise<{ connected: boolean; answered: string; ended: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let connected = false;
    const socket = net.connect(where().port, where().host, () => {
      connected = true;
      socket.write(H2_PREFACE);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = (ended: string) =>
      resolve({ connected, answered: Buffer.concat(chunks).toString('hex'), ended });
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    socket.on('close', () => done('closed'));
    socket.setTimeout(10_000, () => {
      socket.destroy();
      done('still open after 10 s');
    });
  });
}

/** A TLS handshake with the frontend, trusting its CA, with or without our client certificate. */
function tlsExchange(withClientCert: boolean): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      ...where(),
      ca: readFileSync(tls.caFile),
      servername: SERVER_NAME,
      ALPNProtocols: ['h2'],
      ...(withClientCert
        ? { cert: readFileSync(tls.clientCertFile), key: readFileSync(tls.clientKeyFile) }
        : {}),
    });
    // In TLS 1.3 the client is done with the handshake before the server has checked its
    // certificate: the server's verdict comes with the first read.
    socket.on('secureConnect', () => socket.write(H2_PREFACE));
    socket.once('data', () => {
      socket.destroy();
      resolve('answered');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.on('close', () => resolve('closed'));
  });
}

test('the frontend refuses a client without TLS, and one without a client certificate, at the TLS handshake', async () => {
  const ca = { serverRootCACertificate: readFileSync(tls.caFile), serverNameOverride: SERVER_NAME };
  // The same frontend answers a client with every setting, through the SDK and on the wire: the
  // refusals below are about TLS, not a frontend that is not there.
  const clientCertPair = {
    crt: readFileSync(tls.clientCertFile),
    key: readFileSync(tls.clientKeyFile),
  };
  expect(await answers({ address: cluster.address, tls: { ...ca, clientCertPair } })).toBe(true);
  expect(await tlsExchange(true)).toBe('answered');
  // Through the SDK, both are refused; that is all it says of any failure to connect.
  expect(await answers({ address: cluster.address })).not.toBe(true);
  expect(await answers({ address: cluster.address, tls: ca })).not.toBe(true);
  // Plaintext: accepted, then closed without a byte of HTTP/2 back (a plaintext frontend would
  // send its SETTINGS frame): what a TLS server does with a first record that is not TLS.
  expect(await plaintextExchange()).toEqual({
    connected: true,
    answered: '',
    ended: expect.stringMatching(/^(closed|ECONNRESET)$/),
  });
  // TLS without a client certificate: the server's alert that one is required.
  expect(await tlsExchange(false)).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
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
