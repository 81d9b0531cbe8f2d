import { sealedKeyId, type SecretKeyRing } from '../domain/secretSealing';
import type { Queryable } from './pool';
import { preparedStatement } from './statements';

/**
 * Webhook signing secrets at rest: written sealed, opened only to sign a try, resealed under
 * the first key of the ring on rotation, and purged once nothing signs with them.
 */

/** A row as stored: the sealed value and the identity it is sealed for. */
interface StoredSecretRow {
  id: string;
  endpoint_id: string;
  secret: string;
}

/** What a stored row opens to under `keys` (a one-line error naming the row otherwise). */
export function openSecretRow(keys: SecretKeyRing, row: StoredSecretRow): string {
  return keys.open(row.secret, { endpointId: row.endpoint_id, secretId: String(row.id) });
}

const NEXT_SECRET_ID = preparedStatement(
  'webhook-secrets.next-id',
  `SELECT nextval(pg_get_serial_sequence('webhook_secrets', 'id'))::text AS id`,
);
const INSERT_SECRET = preparedStatement(
  'webhook-secrets.insert',
  `INSERT INTO webhook_secrets (id, endpoint_id, secret) OVERRIDING SYSTEM VALUE
   VALUES ($1, $2, $3)`,
);

/**
 * Stores a new current secret of an endpoint, sealed for its row: the row's id is taken first,
 * since the seal binds it.
 */
export async function insertSealedSecret(
  db: Queryable,
  keys: SecretKeyRing,
  endpointId: string,
  secret: string,
): Promise<void> {
  const { rows } = await db.query<{ id: string }>(NEXT_SECRET_ID([]));
  const secretId = rows[0]!.id;
  await db.query(
    INSERT_SECRET([secretId, endpointId, keys.seal(secret, { endpointId, secretId })]),
  );
}

const PLAINTEXT_SECRETS = preparedStatement(
  'webhook-secrets.plaintext',
  `SELECT id::text, endpoint_id, secret FROM webhook_secrets
    WHERE secret LIKE 'whsec\\_%' ORDER BY id LIMIT $1`,
);
const NOT_UNDER_KEY = preparedStatement(
  'webhook-secrets.not-under-key',
  `SELECT id::text, endpoint_id, secret FROM webhook_secrets
    WHERE id > $2 AND split_part(secret, '.', 2) <> $1 ORDER BY id LIMIT $3`,
);
// Compare-and-set: a row another process resealed meanwhile is left as that process wrote it.
const RESEAL = preparedStatement(
  'webhook-secrets.reseal',
  'UPDATE webhook_secrets SET secret = $3 WHERE id = $1 AND secret = $2',
);

/** Rows handled per statement while sealing or rewrapping. */
const BATCH = 500;

/**
 * Seals the secrets written before migration 0022 (plaintext) under the first key. Returns how
 * many this process sealed. Each row keeps its value: it opens to exactly the secret it held.
 */
export async function sealPlaintextSecrets(db: Queryable, keys: SecretKeyRing): Promise<number> {
  let sealed = 0;
  for (;;) {
    const { rows } = await db.query<StoredSecretRow>(PLAINTEXT_SECRETS([BATCH]));
    for (const row of rows) {
      const value = keys.seal(row.secret, { endpointId: row.endpoint_id, secretId: row.id });
      sealed += (await db.query(RESEAL([row.id, row.secret, value]))).rowCount ?? 0;
    }
    if (rows.length < BATCH) return sealed;
  }
}

/**
 * Reseals every secret not yet under the ring's first key (after a new key was put first), and
 * returns how many moved from each key. A row no key of the ring opens stops it with the row's
 * error; what was rewrapped before stays rewrapped.
 */
export async function rewrapSecrets(
  db: Queryable,
  keys: SecretKeyRing,
): Promise<Map<string, number>> {
  await sealPlaintextSecrets(db, keys);
  const moved = new Map<string, number>();
  let after = '0';
  for (;;) {
    const { rows } = await db.query<StoredSecretRow>(
      NOT_UNDER_KEY([keys.sealingKeyId, after, BATCH]),
    );
    for (const row of rows) {
      const value = keys.seal(openSecretRow(keys, row), {
        endpointId: row.endpoint_id,
        secretId: row.id,
      });
      if ((await db.query(RESEAL([row.id, row.secret, value]))).rowCount) {
        const from = sealedKeyId(row.secret) ?? 'plaintext';
        moved.set(from, (moved.get(from) ?? 0) + 1);
      }
      after = row.id;
    }
    if (rows.length < BATCH) return moved;
  }
}

const ONE_PER_KEY = preparedStatement(
  'webhook-secrets.one-per-key',
  `SELECT DISTINCT ON (split_part(secret, '.', 2)) id::text, endpoint_id, secret
     FROM webhook_secrets ORDER BY split_part(secret, '.', 2), id`,
);

/**
 * Opens one secret under each key id the table uses: a key missing from the ring, or a key
 * under a used id that is not the one that sealed, fails here with the row's one-line error.
 */
export async function checkSecretsOpen(db: Queryable, keys: SecretKeyRing): Promise<string[]> {
  const { rows } = await db.query<StoredSecretRow>(ONE_PER_KEY([]));
  for (const row of rows) openSecretRow(keys, row);
  return rows.map((row) => sealedKeyId(row.secret) ?? 'plaintext');
}

const PURGE = preparedStatement(
  'webhook-secrets.purge',
  `DELETE FROM webhook_secrets WHERE id IN (
     SELECT id FROM webhook_secrets WHERE expires_at <= now()
     UNION ALL
     SELECT s.id FROM webhook_secrets s JOIN webhook_endpoints e ON e.id = s.endpoint_id
      WHERE e.deleted_at IS NOT NULL
     LIMIT $1)`,
);

/**
 * Deletes at most `limit` secrets that nothing signs with any more: expired ones (replaced by
 * a rotation, their time over) and every secret of a deleted endpoint. Returns how many.
 */
export async function purgeDeadSecrets(db: Queryable, limit: number): Promise<number> {
  return (await db.query(PURGE([limit]))).rowCount ?? 0;
}
