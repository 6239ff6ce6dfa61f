/**
 * A loader run at the first call and shared by every later one (e.g. a dynamic `import()` of a
 * package most starts never use, kept out of start-up); a failed load is tried again next time.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = null;
      throw err;
    }));
}
