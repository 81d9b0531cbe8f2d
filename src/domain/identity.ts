import { z } from 'zod';

/**
 * What makes a valid owner id and idempotency key: one rule for every entry point (HTTP, the
 * Temporal-native start, a child workflow's admission) and the same one the database CHECKs.
 */
export const MAX_OWNER_ID_LENGTH = 64;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// Printable ASCII only: no NUL, no control characters, nothing HTTP would mangle.
const OWNER_ID = new RegExp(`^[\\x20-\\x7e]{1,${MAX_OWNER_ID_LENGTH}}$`);
const IDEMPOTENCY_KEY = new RegExp(`^[\\x20-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

export const OWNER_ID_RULE = `1-${MAX_OWNER_ID_LENGTH} printable ASCII characters`;
export const IDEMPOTENCY_KEY_RULE = `1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`;

export function isValidOwnerId(value: unknown): value is string {
  return typeof value === 'string' && OWNER_ID.test(value);
}

export function isValidIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && IDEMPOTENCY_KEY.test(value);
}

/** Why (owner, key) cannot identify a job, or undefined when both are valid. */
export function jobIdentityProblem(ownerId: unknown, idempotencyKey: unknown): string | undefined {
  if (!isValidOwnerId(ownerId)) return `the owner must be ${OWNER_ID_RULE}`;
  if (!isValidIdempotencyKey(idempotencyKey))
    return `the idempotency key must be ${IDEMPOTENCY_KEY_RULE}`;
  return undefined;
}

/**
 * The `name:token` pairs of a token setting (`ONEJOB_API_TOKENS`, `ONEJOB_OPERATOR_TOKENS`),
 * comma-separated. The token is what follows the last colon, so names may contain colons
 * (`org:team:token`) and tokens may not; `name` is empty when a pair has no colon.
 */
export function tokenPairs(spec: string): Array<{ name: string; token: string }> {
  return spec
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((pair) => {
      const cut = pair.lastIndexOf(':');
      return { name: cut <= 0 ? '' : pair.slice(0, cut), token: pair.slice(cut + 1) };
    });
}

/**
 * Whether `value` can be the id of a row of ours (jobs, attempts and webhook endpoints have UUIDs).
 * A lookup by anything else finds nothing; asked of PostgreSQL it would be a cast error instead.
 */
export function isUuid(value: string): boolean {
  return z.uuid().safeParse(value).success;
}
