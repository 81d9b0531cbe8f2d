import type { Queryable } from '../db/pool';
import { checkSecretsOpen, sealPlaintextSecrets } from '../db/webhookSecrets';
import type { SecretKeyRing } from '../domain/secretSealing';

/**
 * What the API and the worker do at boot, after the migrations and before they serve: seal the
 * secrets stored before migration 0022 (none is lost: each is sealed to the value it held), and
 * check that the key ring opens the secrets under every key id the table uses. A key left out
 * of ONEJOB_SECRET_KEYS, or a different key under a used id, refuses the start with a one-line
 * error, rather than signing with nothing.
 */
export async function prepareWebhookSecrets(
  db: Queryable,
  keys: SecretKeyRing,
): Promise<{ sealed: number; keyIdsInUse: string[] }> {
  const sealed = await sealPlaintextSecrets(db, keys);
  return { sealed, keyIdsInUse: await checkSecretsOpen(db, keys) };
}
