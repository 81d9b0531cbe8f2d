/**
 * Workflow ids derived from (owner, idempotency key): readable, and injective.
 *
 *   job/<owner>/<key>
 *
 * Each part is percent-encoded for '%', '/' and anything outside printable ASCII, so '/' appears
 * only as the separator and the split back into (owner, key) is unique: owner "a/b" with key "c"
 * and owner "a" with key "b/c" get different ids.
 */
const PREFIX = 'job/';

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

export function jobWorkflowId(ownerId: string, idempotencyKey: string): string {
  if (ownerId.length === 0 || idempotencyKey.length === 0) {
    throw new RangeError('owner id and idempotency key must be non-empty');
  }
  return `${PREFIX}${encodePart(ownerId)}/${encodePart(idempotencyKey)}`;
}

export function parseJobWorkflowId(workflowId: string): {
  ownerId: string;
  idempotencyKey: string;
} {
  if (!workflowId.startsWith(PREFIX)) throw new RangeError(`not a job workflow id: ${workflowId}`);
  const parts = workflowId.slice(PREFIX.length).split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new RangeError(`not a job workflow id: ${workflowId}`);
  }
  return { ownerId: decodeURIComponent(parts[0]), idempotencyKey: decodeURIComponent(parts[1]) };
}
