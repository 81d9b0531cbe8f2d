/**
 * PostgreSQL's `jsonb` cannot hold the character U+0000 (in a key or a value), so an input that
 * contains one could never be stored. Lists where it occurs (as `input.a.0` paths), so such an
 * input is refused as invalid instead of failing at the insert.
 */
export function pathsWithNulCharacter(value: unknown, path: string): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (Array.isArray(value))
    return value.flatMap((item, i) => pathsWithNulCharacter(item, `${path}.${i}`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [
      ...(key.includes('\u0000') ? [`${path}.${JSON.stringify(key)}`] : []),
      ...pathsWithNulCharacter(item, `${path}.${key}`),
    ]);
  }
  return [];
}
