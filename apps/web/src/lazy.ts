import { useEffect, useState } from 'preact/hooks';

/**
 * A module loaded on first use (so the first screen does not carry it) and kept; a load that
 * failed is tried again the next time it is asked for.
 */
export function lazyModule<M>(load: () => Promise<M>): () => Promise<M> {
  let pending: Promise<M> | null = null;
  return () =>
    (pending ??= load().catch((err: unknown) => {
      pending = null;
      throw err;
    }));
}

/** The module `get` loads, once loaded (null meanwhile), and why it could not be ('' otherwise). */
export function useLazyModule<M>(get: () => Promise<M>): [M | null, string] {
  const [mod, setMod] = useState<M | null>(null);
  const [failed, setFailed] = useState('');
  useEffect(() => {
    let live = true;
    get().then(
      (m) => live && setMod(m),
      (err: Error) => live && setFailed(err.message || 'unknown error'),
    );
    return () => {
      live = false;
    };
  }, []);
  return [mod, failed];
}
