/**
 * Runs `work` on every item with at most `limit` of them in flight: independent round trips
 * (job store adds, small updates) overlap instead of waiting for one another. The first failure
 * stops handing out items and is thrown once those in flight are done.
 */
export async function eachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
