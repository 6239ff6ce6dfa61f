/**
 * JSON Merge Patch (RFC 7386): an object patch merges key by key, recursively; a null value
 * deletes the key; anything else (arrays, scalars, a non-object patch) replaces the target.
 * Pure: neither input is changed.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone(value: unknown): unknown {
  return value === undefined ? undefined : structuredClone(value);
}
