import { inspect } from 'node:util';
import { serviceConfig } from '../src/config';
import { DEV_SECRET_KEYS, refusePublishedDevSecrets } from '../src/domain/publishedSecrets';
import { parseSecretKeys, sealedKeyId } from '../src/domain/secretSealing';
import { TEST_SECRET_KEY_1, TEST_SECRET_KEY_2, TEST_SECRET_KEYS } from './support/identities';

/** Sealing webhook secrets at rest (AES-256-GCM, src/domain/secretSealing.ts), without a stack. */
const ring = parseSecretKeys(TEST_SECRET_KEYS);
const row = { endpointId: '6f1c2f9e-8a1b-4c3d-9e5f-0a1b2c3d4e5f', secretId: '41' };
const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

/** `text` with the character at `index` changed to another of the base64url alphabet. */
const flip = (text: string, index: number): string =>
  text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);

test('a sealed secret holds nothing of the secret, names its key, and opens to it for its own row only', () => {
  const sealed = ring.seal(secret, row);
  expect(sealed).toMatch(/^v1\.k2\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
  expect(sealed).not.toContain('whsec_');
  expect(sealed).not.toContain(secret.slice(6, 30));
  expect(sealedKeyId(sealed)).toBe('k2');
  expect(ring.open(sealed, row)).toBe(secret);
  // A fresh nonce each time: the same secret never seals to the same text twice.
  expect(ring.seal(secret, row)).not.toBe(sealed);
});

test('a sealed secret moved to another row, or another endpoint, is refused', () => {
  const sealed = ring.seal(secret, row);
  expect(() => ring.open(sealed, { ...row, secretId: '42' })).toThrow(
    /webhook secret 42 of endpoint .* does not open under key "k2".*altered or moved/,
  );
  expect(() =>
    ring.open(sealed, { ...row, endpointId: '00000000-0000-4000-8000-000000000000' }),
  ).toThrow(/does not open under key "k2"/);
});

test('a sealed secret altered anywhere (key id, nonce, ciphertext, tag) is refused, never opened to something else', () => {
  const sealed = ring.seal(secret, row);
  const [, , nonce, body] = sealed.split('.') as [string, string, string, string];
  const nonceAt = 'v1.k2.'.length;
  const bodyAt = nonceAt + nonce.length + 1;
  for (const altered of [
    // Another key of the ring named: it is not the one that sealed.
    sealed.replace(/^v1\.k2\./, 'v1.k1.'),
    flip(sealed, nonceAt),
    flip(sealed, bodyAt),
    // The tag is the end of the body.
    flip(sealed, bodyAt + body.length - 3),
    // Cut short.
    sealed.slice(0, -4),
  ])
    expect(() => ring.open(altered, row)).toThrow(/does not open|too short/);
  expect(() => ring.open(secret, row)).toThrow(/is not sealed/);
});

test('a ring that lacks the key a secret was sealed under says which key is missing; one with another key under its id says it does not open', () => {
  const sealedUnderOld = parseSecretKeys(TEST_SECRET_KEY_1).seal(secret, row);
  expect(() => parseSecretKeys(TEST_SECRET_KEY_2).open(sealedUnderOld, row)).toThrow(
    'webhook secret 41 of endpoint 6f1c2f9e-8a1b-4c3d-9e5f-0a1b2c3d4e5f is sealed under key "k1", which ONEJOB_SECRET_KEYS does not hold (it holds k2); add it back until the secrets are rewrapped',
  );
  // Rotated: a new key first, the old one still there, opens what the old one sealed.
  expect(ring.open(sealedUnderOld, row)).toBe(secret);
  const impostor = parseSecretKeys(`k1:${Buffer.alloc(32, 1).toString('base64')}`);
  expect(() => impostor.open(sealedUnderOld, row)).toThrow(/does not open under key "k1"/);
});

test('ONEJOB_SECRET_KEYS is read at start: each bad entry is a one-line error that never repeats the key', () => {
  const key = Buffer.alloc(32, 3).toString('base64');
  for (const [text, message] of [
    ['k1', /entry 1: each entry is <keyId>:<base64 of 32 random bytes>/],
    [`:${key}`, /entry 1: each entry is/],
    [`bad id:${key}`, /entry 1: each entry is/],
    [`k1:${key},k2:c2hvcnQ=`, /entry 2 \("k2"\): the key must be 32 bytes in base64.*got 5 bytes/],
    [`k1:${key},k2:not base64!`, /entry 2 \("k2"\): the key must be 32 bytes.*got no base64/],
    [`k1:${key},k1:${key}`, /names key "k1" twice/],
  ] as const) {
    let error: Error | undefined;
    try {
      parseSecretKeys(text);
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).toMatch(/^ONEJOB_SECRET_KEYS/);
    expect(error?.message).not.toContain('\n');
    expect(error?.message).not.toContain(key);
  }
  // A base64url key is as good as a standard one.
  expect(parseSecretKeys(`k1:${Buffer.alloc(32, 0xfb).toString('base64url')}`).keyIds).toEqual([
    'k1',
  ]);
});

test('the key ring never shows its keys: printed or logged, it names the key ids only', () => {
  const printed = [inspect(ring), JSON.stringify({ ring }), String(inspect({ config: ring }))];
  for (const text of printed) {
    expect(text).toContain('k2');
    expect(text).not.toContain(TEST_SECRET_KEY_2.slice(3, 20));
    expect(text).not.toContain(Buffer.from(TEST_SECRET_KEY_2.slice(3), 'base64').toString('hex'));
  }
});

test('without ONEJOB_SECRET_KEYS a service refuses to start unless npm start started it, which gets the published dev key, and no deployment may use that key', () => {
  const env = { DATABASE_URL: 'postgres://x' };
  expect(() => serviceConfig(env)).toThrow(/^ONEJOB_SECRET_KEYS is not set: it seals webhook/);
  const dev = serviceConfig({ ...env, ONEJOB_DEV_STACK: '1' }).secretKeys;
  expect(dev.keyIds).toEqual(['dev']);
  expect(serviceConfig({ ...env, ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS }).secretKeys.keyIds).toEqual(
    ['k2', 'k1'],
  );
  // Given by hand outside npm start, first or not, in either base64 alphabet: refused.
  const devKey = DEV_SECRET_KEYS.slice('dev:'.length);
  for (const keys of [
    DEV_SECRET_KEYS,
    `${TEST_SECRET_KEY_2},old:${devKey}`,
    `mine:${Buffer.from(devKey, 'base64').toString('base64url')}`,
  ])
    expect(() => refusePublishedDevSecrets({ ONEJOB_SECRET_KEYS: keys }, [])).toThrow(
      /^ONEJOB_SECRET_KEYS holds one of onejob's published dev secrets/,
    );
  expect(() =>
    refusePublishedDevSecrets({ ONEJOB_SECRET_KEYS: TEST_SECRET_KEYS }, []),
  ).not.toThrow();
  expect(() =>
    refusePublishedDevSecrets({ ONEJOB_SECRET_KEYS: DEV_SECRET_KEYS, ONEJOB_DEV_STACK: '1' }, []),
  ).not.toThrow();
});
