import { isIP } from 'node:net';
import { DEFAULTS } from '../domain/defaults';
import { startedByDevStack } from '../domain/publishedSecrets';
import type { WebhookNameSettings, WebhookRetry } from '../domain/webhooks';
import { parseAllowedTargets, type AllowedTargets } from '../service/webhookTargets';
import { milliseconds, positiveInteger } from './read';

/**
 * A webhook safeguard's setting, `allow` or `deny`; unset, only processes npm start started
 * allow it (a receiver on this machine is how one tries webhooks out):
 * ONEJOB_WEBHOOK_INTERNAL_TARGETS, receivers on internal networks (loopback, private,
 * link-local); ONEJOB_WEBHOOK_PLAIN_HTTP, receivers over plain http (an event is signed but
 * readable, so elsewhere it goes over https only).
 */
export function webhookAllowance(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return startedByDevStack(env);
  if (raw === 'allow' || raw === 'deny') return raw === 'allow';
  throw new Error(`${name} must be allow or deny, got "${raw}"`);
}

/**
 * ONEJOB_WEBHOOK_ALLOWED_TARGETS, and with it ONEJOB_WEBHOOK_INTERNAL_TARGETS: the listed
 * internal hosts and ranges are let through and the rest of the internal networks refused, so
 * a list beside `allow` (which lets every one through) says two things at once.
 */
export function webhookTargets(env: NodeJS.ProcessEnv): {
  allowInternal: boolean;
  allowed: AllowedTargets;
} {
  const variable = 'ONEJOB_WEBHOOK_ALLOWED_TARGETS';
  const allowed = parseAllowedTargets(env[variable] ?? '', variable);
  const listed = allowed.names.length + allowed.ranges.length > 0;
  const allowInternal = webhookAllowance(env, 'ONEJOB_WEBHOOK_INTERNAL_TARGETS');
  if (listed && env.ONEJOB_WEBHOOK_INTERNAL_TARGETS === 'allow')
    throw new Error(
      `${variable} lets chosen internal targets through, but ONEJOB_WEBHOOK_INTERNAL_TARGETS=allow lets every one through: unset one of them`,
    );
  return { allowInternal: allowInternal && !listed, allowed };
}

/** ONEJOB_WEBHOOK_DNS_SERVERS (comma-separated host or host:port) and ONEJOB_WEBHOOK_DNS_TIMEOUT_MS. */
export function webhookNameSettings(env: NodeJS.ProcessEnv): WebhookNameSettings {
  const timeoutMs = milliseconds(
    env,
    'ONEJOB_WEBHOOK_DNS_TIMEOUT_MS',
    DEFAULTS.webhookDnsTimeoutMs,
  );
  if (timeoutMs < 100 || timeoutMs > 30_000)
    throw new Error(`ONEJOB_WEBHOOK_DNS_TIMEOUT_MS must be 100 to 30000, got "${timeoutMs}"`);
  const raw = env.ONEJOB_WEBHOOK_DNS_SERVERS;
  if (raw === undefined || raw === '') return { timeoutMs };
  const servers = raw.split(',').map((server) => server.trim());
  for (const server of servers) {
    const host = server.replace(/^\[(.*)\](:\d+)?$/, '$1').replace(/^([^:]+):\d+$/, '$1');
    if (isIP(host) === 0)
      throw new Error(
        `ONEJOB_WEBHOOK_DNS_SERVERS must list IP addresses (with :port if not 53), got "${server}"`,
      );
  }
  return { servers, timeoutMs };
}

/** How webhook deliveries are retried: first wait, longest wait, and when to give up. */
export function webhookRetrySettings(env: NodeJS.ProcessEnv = process.env): WebhookRetry {
  return {
    initialIntervalMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_FIRST_RETRY_MS',
      DEFAULTS.webhookRetry.initialIntervalMs,
    ),
    maximumIntervalMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_MAX_RETRY_INTERVAL_MS',
      DEFAULTS.webhookRetry.maximumIntervalMs,
    ),
    giveUpAfterMs: milliseconds(
      env,
      'ONEJOB_WEBHOOK_GIVE_UP_AFTER_MS',
      DEFAULTS.webhookRetry.giveUpAfterMs,
    ),
  };
}

/** What one owner may register of webhooks (docs/configuration.md). */
export function webhookLimits(env: NodeJS.ProcessEnv) {
  const liveSecretsPerEndpoint = positiveInteger(
    env,
    'ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT',
    DEFAULTS.webhookLiveSecretsPerEndpoint,
  );
  // The current secret and the one a rotation replaces: fewer would make rotations gap.
  if (liveSecretsPerEndpoint < 2)
    throw new Error(
      `ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT must be at least 2 (the current secret and the one a rotation replaces), got "${env.ONEJOB_WEBHOOK_LIVE_SECRETS_PER_ENDPOINT}"`,
    );
  return {
    endpointsPerOwner: positiveInteger(
      env,
      'ONEJOB_WEBHOOK_ENDPOINTS_PER_OWNER',
      DEFAULTS.webhookEndpointsPerOwner,
    ),
    liveSecretsPerEndpoint,
  };
}
