// First: tracing must be running before http and pg are loaded.
// eslint-disable-next-line import-x/order
import { apiTracing } from '../telemetry/apiTracing';
import { Client, Connection } from '@temporalio/client';
import { buildApi } from '../api/app';
import { knownBearer, parseTokenSettings } from '../api/auth';
import { apiConfig, withDefaults } from '../config';
import { schemaAtStart } from '../db/migrate';
import { createPool } from '../db/pool';
import { refusePublishedDevSecrets } from '../domain/publishedSecrets';
import { metricsAccessFor } from '../health/metricsAccess';
import { createLogger } from '../logger';
import { ProviderRegistry, providerConfigsFromEnv } from '../providers/registry';
import { prepareWebhookSecrets } from '../service/webhookSecrets';
import { tracingClientInterceptors } from '../telemetry/temporalTracing';
import { temporalConnectOptions } from '../temporal/connection';
import { exitWithParent, tellParent } from './parentLink';

async function main(): Promise<void> {
  const logger = createLogger('onejob-api');
  const config = apiConfig();
  const { tokens, operatorTokens } = parseTokenSettings(config.apiTokens, config.operatorTokens);
  // Only a caller with a token of ours brings its trace context (see keepTrustedContext).
  apiTracing?.trustCallers(knownBearer(tokens, operatorTokens));
  const providerConfigs = providerConfigsFromEnv();
  refusePublishedDevSecrets(process.env, providerConfigs);
  const providers = new ProviderRegistry(providerConfigs);
  const pool = createPool(config.databaseUrl);
  tellParent({ starting: 'migrations' });
  await schemaAtStart(pool, config.migrations);
  tellParent({ starting: 'webhook secrets' });
  const secrets = await prepareWebhookSecrets(pool, config.secretKeys);
  if (secrets.sealed > 0) logger.info(secrets, 'webhook secrets sealed at rest');
  tellParent({ starting: 'connecting to Temporal' });
  const connection = await Connection.connect(temporalConnectOptions(config.temporal));
  const temporal = new Client({
    connection,
    namespace: config.temporal.namespace,
    interceptors: tracingClientInterceptors(apiTracing),
  });
  tellParent({ starting: 'routes' });
  const app = await buildApi({
    // The settings its modules take, as the environment gave them.
    ...withDefaults(config),
    pool,
    temporal,
    providers,
    tokens,
    operatorTokens,
    logger,
    metricsAccess: metricsAccessFor(config.metricsToken),
    instanceHeader: config.instanceHeader,
    ownerLimits: config.ownerLimits,
    allowInternalWebhookTargets: config.allowInternalWebhookTargets,
    allowedWebhookTargets: config.allowedWebhookTargets,
    allowPlainHttpWebhooks: config.allowPlainHttpWebhooks,
    secretKeys: config.secretKeys,
  });
  tellParent({ starting: 'listening' });
  await app.listen({ host: config.host, port: config.port });
  tellParent({ ready: true });

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await app.close();
    await connection.close();
    await pool.end();
    await apiTracing?.shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  exitWithParent(stop);
}

main().catch((error: unknown) => {
  console.error(`onejob api: ${(error as Error).message}`);
  process.exit(1);
});
