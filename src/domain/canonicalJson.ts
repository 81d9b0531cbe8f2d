/**
 * Canonical JSON (RFC 8785, JCS) for values that came from JSON: object keys sorted by
 * UTF-16 code units, no whitespace, numbers and strings in ECMAScript's JSON form.
 * Two intents that differ only in key order or whitespace canonicalise to the same text.
 */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonical JSON has no NaN or Infinity');
      // ECMAScript's Number-to-string is the serialisation RFC 8785 prescribes (and -0 is 0).
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const record = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot represent a ${typeof value}`);
  }
}
