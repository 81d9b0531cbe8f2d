/** Who the test stack knows: owners and their API tokens, the operator, the callback secret. */

export const TEST_OWNER = 'owner-a@example.com';
export const TEST_TOKEN = 'token-owner-a-0001';
export const OTHER_OWNER = 'org/team:b';
export const OTHER_TOKEN = 'token-owner-b-0002';
/** An owner no shared test uses, for a test that needs one whose buckets are full. */
export const SPARE_OWNER = 'owner-spare';
export const SPARE_TOKEN = 'token-owner-spare-0003';
export const OPERATOR = 'ops-alice';
export const OPERATOR_TOKEN = 'token-operator-0001';
export const CALLBACK_SECRET = 'test-callback-secret';
/** The longest owner id the API accepts, made of characters that workflow ids escape (×3). */
export const LONGEST_OWNER = '%/'.repeat(32);
export const LONGEST_OWNER_TOKEN = 'token-longest-owner';
/** Owners whose names play separator tricks on each other, by token. */
export const TRICK_OWNERS = {
  a: 'token-trick-plain',
  'a:b': 'token-trick-colon',
  'a/b': 'token-trick-slash',
} as const;
/**
 * The test stack's ONEJOB_SECRET_KEYS (its services seal webhook secrets under the first): two
 * keys, as after a rotation.
 */
export const TEST_SECRET_KEY_2 = 'k2:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
export const TEST_SECRET_KEY_1 = 'k1:ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=';
export const TEST_SECRET_KEYS = `${TEST_SECRET_KEY_2},${TEST_SECRET_KEY_1}`;
