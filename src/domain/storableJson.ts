/**
 * PostgreSQL's `jsonb` cannot hold the character U+0000 (in a key or a value), so an input that
 * contains one could never be stored. Lists where it occurs (as `input.a.0` paths), so such an
 * input is refused as invalid instead of failing at the insert. Walks iteratively (depth first,
 * in document order), so no input, however deep, overflows the stack.
 */
export function pathsWithNulCharacter(value: unknown, path: string): string[] {
  const found: string[] = [];
  // A `key` entry is a key holding NUL, reported in its place among its siblings' values.
  const pending: Array<{ value: unknown; path: string; key?: true }> = [{ value, path }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: current, path: at } = next;
    if (next.key || typeof current === 'string') {
      if (next.key || (current as string).includes('\u0000')) found.push(at);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    const children: Array<{ value: unknown; path: string; key?: true }> = [];
    if (Array.isArray(current))
      current.forEach((item, i) => children.push({ value: item, path: `${at}.${i}` }));
    else
      for (const [key, item] of Object.entries(current)) {
        if (key.includes('\u0000'))
          children.push({ value: undefined, path: `${at}.${JSON.stringify(key)}`, key: true });
        children.push({ value: item, path: `${at}.${key}` });
      }
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]!);
  }
  return found;
}
