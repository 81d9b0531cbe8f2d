import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { DEV_SECRET_KEYS, startedByDevStack } from './publishedSecrets';

/**
 * Webhook signing secrets are kept sealed at rest: AES-256-GCM under a key from the
 * environment, so a copy of the database (a backup, a replica, a stolen dump) holds nothing an
 * attacker could sign events with. The key ring is ONEJOB_SECRET_KEYS: comma-separated
 * `<keyId>:<base64 of 32 bytes>` entries, the first seals, every one opens, so a key is
 * rotated by putting a new one first, rewrapping, and then dropping the old one.
 *
 * Stored form: `v1.<keyId>.<nonce>.<ciphertext and tag>`, both in base64url. The row it belongs
 * to (endpoint and secret id) is bound in as additional data: a sealed value copied onto another
 * row, or another endpoint, does not open.
 */
export const SECRET_KEYS_VARIABLE = 'ONEJOB_SECRET_KEYS';

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';
/** What the database's CHECK on webhook_secrets.secret says too (migration 0022). */
const SEALED = /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22,})$/;

/** The row a secret is sealed for. */
export interface SecretRow {
  endpointId: string;
  secretId: string;
}

const additionalData = (row: SecretRow, keyId: string): Buffer =>
  Buffer.from(`onejob.webhook-secret.${FORMAT}|${row.endpointId}|${row.secretId}|${keyId}`);

const describe = (row: SecretRow): string =>
  `webhook secret ${row.secretId} of endpoint ${row.endpointId}`;

/** The key id a sealed value names, or undefined when it is not in the sealed form. */
export function sealedKeyId(stored: string): string | undefined {
  return SEALED.exec(stored)?.[1];
}

/**
 * The keys of ONEJOB_SECRET_KEYS. Their bytes never leave this object: printing or logging it
 * shows the key ids only.
 */
export class SecretKeyRing {
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** The key that seals: the first of the setting. */
  readonly sealingKeyId: string;

  constructor(keys: ReadonlyArray<{ id: string; key: Buffer }>) {
    const first = keys[0];
    if (!first) throw new Error('a key ring needs at least one key');
    this.sealingKeyId = first.id;
    this.#keys = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /** Every key id, the sealing one first. */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  /** Whether one of the keys is exactly `key` (the published dev key, say). */
  holdsKey(key: Buffer): boolean {
    return [...this.#keys.values()].some((held) => held.equals(key));
  }

  /** `plain` sealed under the first key, for `row` only. */
  seal(plain: string, row: SecretRow): string {
    const keyId = this.sealingKeyId;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(keyId)!, nonce);
    cipher.setAAD(additionalData(row, keyId));
    const sealed = Buffer.concat([
      cipher.update(plain, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${FORMAT}.${keyId}.${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /**
   * What `stored` seals, if it was sealed for `row` under a key of this ring and not altered
   * since; a one-line error naming the row and the key otherwise.
   */
  open(stored: string, row: SecretRow): string {
    const parts = SEALED.exec(stored);
    if (!parts) throw new Error(`${describe(row)} is not sealed (not in the v1 form)`);
    const [, keyId, nonce, sealed] = parts as unknown as [string, string, string, string];
    const key = this.#keys.get(keyId);
    if (!key)
      throw new Error(
        `${describe(row)} is sealed under key "${keyId}", which ${SECRET_KEYS_VARIABLE} does not hold (it holds ${this.keyIds.join(', ')}); add it back until the secrets are rewrapped`,
      );
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length <= TAG_BYTES) throw new Error(`${describe(row)} is too short to be sealed`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(additionalData(row, keyId));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new Error(
        `${describe(row)} does not open under key "${keyId}" of ${SECRET_KEYS_VARIABLE}: that key is not the one that sealed it, or the stored value was altered or moved from another row`,
      );
    }
  }

  [inspect.custom](): string {
    return `SecretKeyRing(${this.keyIds.join(', ')})`;
  }

  toJSON(): { keyIds: string[] } {
    return { keyIds: this.keyIds };
  }
}

/**
 * ONEJOB_SECRET_KEYS read into a ring; a one-line error that never repeats key bytes
 * otherwise. `text` is the setting's value.
 */
export function parseSecretKeys(text: string): SecretKeyRing {
  const entries = text.split(',').map((entry) => entry.trim());
  const keys = entries.map((entry, index) => {
    const at = entry.indexOf(':');
    const id = at < 0 ? '' : entry.slice(0, at);
    const encoded = at < 0 ? entry : entry.slice(at + 1);
    const where = `${SECRET_KEYS_VARIABLE}, entry ${index + 1}${KEY_ID.test(id) ? ` ("${id}")` : ''}`;
    if (!KEY_ID.test(id))
      throw new Error(
        `${where}: each entry is <keyId>:<base64 of 32 random bytes>, the id 1 to 32 of A-Z a-z 0-9 _ -`,
      );
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)
      ? Buffer.from(
          encoded,
          encoded.includes('-') || encoded.includes('_') ? 'base64url' : 'base64',
        )
      : Buffer.alloc(0);
    if (key.length !== KEY_BYTES)
      throw new Error(
        `${where}: the key must be 32 bytes in base64 (openssl rand -base64 32), got ${key.length === 0 ? 'no base64' : `${key.length} bytes`}`,
      );
    return { id, key };
  });
  const ids = keys.map((k) => k.id);
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice !== undefined) throw new Error(`${SECRET_KEYS_VARIABLE} names key "${twice}" twice`);
  return new SecretKeyRing(keys);
}

/**
 * The key ring of this process. Unset, only processes `npm start` started get the published dev
 * key (their webhook secrets are a developer's own); a deployment must set it, and is refused
 * the dev key (refusePublishedDevSecrets).
 */
export function secretKeyRing(env: NodeJS.ProcessEnv): SecretKeyRing {
  const raw = env[SECRET_KEYS_VARIABLE];
  if (raw !== undefined && raw !== '') return parseSecretKeys(raw);
  if (startedByDevStack(env)) return parseSecretKeys(DEV_SECRET_KEYS);
  throw new Error(
    `${SECRET_KEYS_VARIABLE} is not set: it seals webhook signing secrets at rest; set it to <keyId>:<base64 of 32 random bytes>, e.g. k1:$(openssl rand -base64 32)`,
  );
}
