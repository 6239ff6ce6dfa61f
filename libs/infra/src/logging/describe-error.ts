/**
 * A readable reason for anything thrown, never `[object Object]`: an Error's message (with
 * its code and causes), or the telling fields of a plain object (an Emscripten/PGlite
 * `ErrnoError`, a driver's error shape), else its JSON.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = err, hops = 0; current !== undefined && current !== null && hops < 4; hops++) {
    parts.push(describeOne(current));
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.filter((p) => p !== '').join(' — caused by: ') || String(err);
}

function describeOne(err: unknown): string {
  if (typeof err !== 'object') return String(err);
  const e = err as Record<string, unknown>;
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : '';
  const tags = ['code', 'errno', 'syscall', 'path', 'status']
    .filter((k) => (typeof e[k] === 'string' || typeof e[k] === 'number') && !message.includes(String(e[k])))
    .map((k) => `${k} ${String(e[k])}`);
  const name = typeof e.name === 'string' && e.name !== 'Error' ? e.name : '';
  const head = [name, message].filter(Boolean).join(': ');
  if (head || tags.length > 0) return [head, tags.length > 0 ? `(${tags.join(', ')})` : ''].filter(Boolean).join(' ');
  try {
    const json = JSON.stringify(err);
    if (json && json !== '{}') return json;
  } catch {
    /* circular */
  }
  const ctor = (err as object).constructor?.name;
  return ctor && ctor !== 'Object' ? ctor : 'unknown error (an object with no message)';
}
