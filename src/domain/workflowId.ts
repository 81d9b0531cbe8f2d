/**
 * Workflow ids derived from (owner, idempotency key): readable while they fit, injective always,
 * and never longer than any engine we run on accepts.
 *
 *   job/<owner>/<key>                  the readable form, whenever it fits
 *   job-sha256/<owner>/<digest of key> the digest form, for keys too long to be readable
 *   …/<generation>                     either form, for a key's later jobs (2, 3, …) after an
 *                                      operator released it
 *
 * Each part is percent-encoded for '%', '/' and anything outside printable ASCII, so '/' appears
 * only as the separator and the split back into (owner, key) is unique: owner "a/b" with key "c"
 * and owner "a" with key "b/c" get different ids. The two forms start differently, so a readable
 * id can never equal a digest id; two digest ids are equal only if owners and SHA-256 digests are.
 * A later generation adds a third part, so it never equals a first generation's id, and its
 * number tells the generations of one key apart.
 * Pure (no Node APIs): the child-workflow recipe derives ids inside the workflow sandbox.
 */
import { sha256 } from '@noble/hashes/sha2';

/**
 * The longest workflow id we ever make. Temporal's own default (`limit.maxIDLength`) is 1000,
 * but servers on SQL persistence are commonly set to 255 (the server's SQL example config, and
 * the visibility schema's VARCHAR(255) columns), and such a server refuses longer ids with
 * "WorkflowId length exceeds limit". 255 fits every engine we know of. The digest form is at
 * most 11 + 3 × 64 (an owner of escaped characters) + 1 + 43 = 247 characters.
 */
export const MAX_WORKFLOW_ID_LENGTH = 255;

const READABLE_PREFIX = 'job/';
const DIGEST_PREFIX = 'job-sha256/';

function encodePart(part: string): string {
  let out = '';
  for (const char of part) {
    const code = char.codePointAt(0) ?? 0;
    if (code >= 0x20 && code <= 0x7e && char !== '%' && char !== '/') {
      out += char;
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Unpadded base64url: a SHA-256 digest in 43 characters, none of them '/' or '%'. */
function base64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a = 0, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const triple = (a << 16) | (b << 8) | c;
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let j = 0; j < chars; j++) out += BASE64URL[(triple >> (18 - 6 * j)) & 63];
  }
  return out;
}

/** The SHA-256 digest of an idempotency key, as it appears in a digest-form workflow id. */
export function idempotencyKeyDigest(idempotencyKey: string): string {
  return base64url(sha256(new TextEncoder().encode(idempotencyKey)));
}

/** The most generations one key can have: keeps the longest digest-form id within 255. */
export const MAX_KEY_GENERATION = 9_999_999;

export function jobWorkflowId(ownerId: string, idempotencyKey: string, generation = 1): string {
  if (ownerId.length === 0 || idempotencyKey.length === 0) {
    throw new RangeError('owner id and idempotency key must be non-empty');
  }
  if (!Number.isInteger(generation) || generation < 1 || generation > MAX_KEY_GENERATION) {
    throw new RangeError(`a key's generation is 1 to ${MAX_KEY_GENERATION}, not ${generation}`);
  }
  const owner = encodePart(ownerId);
  const suffix = generation === 1 ? '' : `/${generation}`;
  const readable = `${READABLE_PREFIX}${owner}/${encodePart(idempotencyKey)}${suffix}`;
  if (readable.length <= MAX_WORKFLOW_ID_LENGTH) return readable;
  return `${DIGEST_PREFIX}${owner}/${idempotencyKeyDigest(idempotencyKey)}${suffix}`;
}

export type ParsedJobWorkflowId = (
  | { form: 'readable'; ownerId: string; idempotencyKey: string }
  | { form: 'digest'; ownerId: string; idempotencyKeyDigest: string }
) & { generation: number };

export function parseJobWorkflowId(workflowId: string): ParsedJobWorkflowId {
  const form = workflowId.startsWith(READABLE_PREFIX)
    ? 'readable'
    : workflowId.startsWith(DIGEST_PREFIX)
      ? 'digest'
      : undefined;
  const parts = form
    ? workflowId.slice((form === 'readable' ? READABLE_PREFIX : DIGEST_PREFIX).length).split('/')
    : [];
  const generationPart = parts.length === 3 ? parts[2]! : '1';
  const generation = /^[1-9]\d{0,6}$/.test(generationPart) ? Number(generationPart) : 0;
  if (
    !form ||
    (parts.length !== 2 && parts.length !== 3) ||
    !parts[0] ||
    !parts[1] ||
    generation < 1 ||
    (parts.length === 3 && generation === 1)
  ) {
    throw new RangeError(`not a job workflow id: ${workflowId}`);
  }
  const ownerId = decodeURIComponent(parts[0]);
  return form === 'readable'
    ? { form, ownerId, idempotencyKey: decodeURIComponent(parts[1]), generation }
    : { form, ownerId, idempotencyKeyDigest: parts[1], generation };
}
