import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalConnectionSettings, temporalConnectOptions } from '../src/temporal/connection';

const dir = mkdtempSync(path.join(os.tmpdir(), 'onejob-tls-'));
const file = (name: string, content: string): string => {
  const target = path.join(dir, name);
  writeFileSync(target, content);
  return target;
};

test('a local server needs nothing but its address; no TLS is forced on it', () => {
  expect(temporalConnectionSettings({})).toEqual({
    address: '127.0.0.1:7233',
    namespace: 'default',
  });
  expect(
    temporalConnectOptions(temporalConnectionSettings({ TEMPORAL_ADDRESS: 'temporal:7233' })),
  ).toEqual({ address: 'temporal:7233' });
});

test('Temporal Cloud with an API key: TLS on, the key passed to the client', () => {
  const settings = temporalConnectionSettings({
    TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
    TEMPORAL_NAMESPACE: 'onejob.a1b2c',
    TEMPORAL_API_KEY: 'secret-key',
  });
  expect(temporalConnectOptions(settings)).toEqual({
    address: 'us-east-1.aws.api.temporal.io:7233',
    tls: {},
    apiKey: 'secret-key',
  });
  expect(settings.namespace).toBe('onejob.a1b2c');
});

test('mTLS: the client certificate pair, a private CA and a server name are read from their files', () => {
  const settings = temporalConnectionSettings({
    TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem', 'CERT'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key', 'KEY'),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem', 'CA'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
  });
  expect(settings.tls?.clientCertPair?.crt.toString()).toBe('CERT');
  expect(settings.tls?.clientCertPair?.key.toString()).toBe('KEY');
  expect(settings.tls?.serverRootCACertificate?.toString()).toBe('CA');
  expect(settings.tls?.serverNameOverride).toBe('temporal.internal');
});

test.each([
  [
    {
      TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/client.pem',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/k',
    },
    /TEMPORAL_TLS_CLIENT_CERT_PATH=\/nonexistent\/client.pem cannot be read: ENOENT/,
  ],
  [{ TEMPORAL_TLS_CLIENT_CERT_PATH: file('only.pem', 'CERT') }, /go together/],
  [{ TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS must be "true" or "false"/],
  [{ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' }, /need TLS/],
])('a wrong setting is a one-line error that names it (%#)', (env, message) => {
  expect(() => temporalConnectionSettings(env)).toThrow(message);
});

test('the API key never appears in an error message', () => {
  let message = '';
  try {
    temporalConnectionSettings({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'do-not-print-me' });
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).not.toBe('');
  expect(message).not.toContain('do-not-print-me');
});
