import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { readFileSync } from 'node:fs';
import { DEFAULTS } from '../domain/defaults';

/**
 * How every process of ours reaches Temporal, from the environment variables the temporal CLI
 * reads too: a local server needs only TEMPORAL_ADDRESS; a self-hosted cluster with TLS, or
 * Temporal Cloud, adds an API key or a client certificate (mTLS).
 *
 *   TEMPORAL_ADDRESS                      host:port (default 127.0.0.1:7233)
 *   TEMPORAL_NAMESPACE                    default "default"
 *   TEMPORAL_API_KEY                      an API key (implies TLS)
 *   TEMPORAL_TLS                          "true" / "false" (default: on with a key or certificate)
 *   TEMPORAL_TLS_CLIENT_CERT_PATH         mTLS client certificate (PEM) …
 *   TEMPORAL_TLS_CLIENT_KEY_PATH          … and its private key
 *   TEMPORAL_TLS_SERVER_CA_CERT_PATH      a CA to trust for the server (default: the system's)
 *   TEMPORAL_TLS_SERVER_NAME              the name to check the server's certificate against
 */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  tls?: TLSConfig;
  apiKey?: string;
}

function readPem(env: NodeJS.ProcessEnv, name: string): Buffer | undefined {
  const file = env[name];
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`${name}=${file} cannot be read: ${(error as NodeJS.ErrnoException).code}`);
  }
}

export function temporalConnectionSettings(
  env: NodeJS.ProcessEnv = process.env,
): TemporalConnectionSettings {
  const address = env.TEMPORAL_ADDRESS || `127.0.0.1:${DEFAULTS.temporalPort}`;
  const namespace = env.TEMPORAL_NAMESPACE || 'default';
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const crt = readPem(env, 'TEMPORAL_TLS_CLIENT_CERT_PATH');
  const key = readPem(env, 'TEMPORAL_TLS_CLIENT_KEY_PATH');
  if (Boolean(crt) !== Boolean(key))
    throw new Error(
      'TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: set both or neither',
    );
  const ca = readPem(env, 'TEMPORAL_TLS_SERVER_CA_CERT_PATH');
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  const tlsSetting = env.TEMPORAL_TLS?.trim().toLowerCase();
  if (tlsSetting && tlsSetting !== 'true' && tlsSetting !== 'false')
    throw new Error(`TEMPORAL_TLS must be "true" or "false", got "${env.TEMPORAL_TLS}"`);
  const wantsTls = Boolean(apiKey || crt || ca || serverName);
  if (tlsSetting === 'false' && wantsTls)
    throw new Error('TEMPORAL_TLS=false, but an API key or TLS files are set: they need TLS');
  const tls =
    tlsSetting === 'true' || wantsTls
      ? {
          ...(crt && key ? { clientCertPair: { crt, key } } : {}),
          ...(ca ? { serverRootCACertificate: ca } : {}),
          ...(serverName ? { serverNameOverride: serverName } : {}),
        }
      : undefined;
  return { address, namespace, ...(tls ? { tls } : {}), ...(apiKey ? { apiKey } : {}) };
}

/** The options Connection.connect and NativeConnection.connect take (never logged: a key). */
export function temporalConnectOptions(settings: TemporalConnectionSettings) {
  return {
    address: settings.address,
    ...(settings.tls ? { tls: settings.tls } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
  };
}
