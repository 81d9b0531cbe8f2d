import type { Command } from 'commander';
import { rewrapSecrets } from '../db/webhookSecrets';
import { secretKeyRing } from '../domain/secretSealing';
import { prepareWebhookSecrets } from '../service/webhookSecrets';
import { withPool } from './commandContext';

/** `secrets rewrap`: the step of a key rotation that moves every secret under the new key. */
export function addSecretCommands(program: Command): void {
  const secrets = program
    .command('secrets')
    .description('Webhook signing secrets, stored sealed under ONEJOB_SECRET_KEYS');
  secrets
    .command('rewrap')
    .description(
      'Reseal every webhook secret under the first key of ONEJOB_SECRET_KEYS (after a new key was put first); the old key may be dropped once it is done',
    )
    .action(async () => {
      // The same ring the services read: every key that sealed a secret must still be in it.
      const keys = secretKeyRing(process.env);
      await withPool(async (pool) => {
        await prepareWebhookSecrets(pool, keys);
        const moved = await rewrapSecrets(pool, keys);
        const total = [...moved.values()].reduce((sum, n) => sum + n, 0);
        const from = [...moved].map(([keyId, n]) => `${n} from ${keyId}`).join(', ');
        console.log(
          `rewrapped ${total} webhook secret${total === 1 ? '' : 's'} under key ${keys.sealingKeyId}${from ? ` (${from})` : ''}; every secret is now sealed under it`,
        );
      });
    });
}
