/**
 * Runs `work` on each item, at most `limit` at a time. Settles when every item has been worked
 * (a failure does not stop the other lanes mid-way), then throws the first failure, if any.
 */
export async function concurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!).catch((error) => failures.push(error));
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failures.length > 0) throw failures[0];
}
