/** Runs `fn` over `items` with at most `parallel` in flight, in order of start. */
export async function forEachLimited<T>(items: readonly T[], parallel: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(parallel, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  });
  await Promise.all(workers);
}
