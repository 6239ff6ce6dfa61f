/**
 * Text the database cannot hold, found or made storable in one place.
 *
 * PostgreSQL refuses a NUL character in `text` and a `\u0000` escape in `jsonb`, and its
 * JSON parser refuses unpaired surrogates; JavaScript strings can carry both. Input from
 * callers is refused (naming the field); text the server must keep anyway (tool inputs
 * and results, model output) is made storable by replacing each with U+FFFD.
 */

export const REPLACEMENT_CHAR = '\uFFFD';

/** Deepest nesting of objects and arrays accepted in a JSON request body. */
export const MAX_JSON_DEPTH = 64;

/** Longest file or folder name, in UTF-8 bytes (the usual filesystem limit). */
export const MAX_NAME_BYTES = 255;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** In JSON.stringify output a `\u0000` or `\udXXX` escape (after an even run of backslashes) is NUL or a lone surrogate. */
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g;

/** Why a string cannot be taken as input, or null when it can. */
export function unsafeTextReason(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(value)) return 'must not contain unpaired surrogate characters';
  return null;
}

/** The string with NUL and unpaired surrogates replaced by U+FFFD. */
export function storableText(value: string): string {
  return value.replace(UNSTORABLE, REPLACEMENT_CHAR);
}

/** JSON text of a value that `jsonb` accepts: NUL and unpaired surrogates (keys included) become U+FFFD. */
export function storableJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSTORABLE_ESCAPE, '$1\\ufffd');
}

export interface UnsafeText {
  /** Field path, e.g. `todos[0].content`. */
  field: string;
  reason: string;
}

/**
 * The first string (value or key) in `value` that input must not carry, with its path;
 * walked without recursion, so depth costs nothing but the (already bounded) size.
 */
export function findUnsafeText(value: unknown, root: string): UnsafeText | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      const reason = unsafeTextReason(current);
      if (reason) return { field: path || 'value', reason };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: `${path}[${i}]` });
    } else if (current !== null && typeof current === 'object') {
      const keys = Object.keys(current);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const field = path ? `${path}.${key}` : key;
        const reason = unsafeTextReason(key);
        if (reason) return { field: path || 'body', reason: `keys ${reason}` };
        stack.push({ value: (current as Record<string, unknown>)[key], path: field });
      }
    }
  }
  return null;
}

/** Deepest nesting of `[`/`{` in JSON text, counted in one pass outside strings; stops past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Why a file or folder name is too long, or null. */
export function nameLengthProblem(name: string): string | null {
  const bytes = Buffer.byteLength(name, 'utf8');
  return bytes > MAX_NAME_BYTES ? `${NAME_TOO_LONG} (this one has ${bytes})` : null;
}

/** The refusal of a too-long name, whoever notices it (a rule here, or the filesystem). */
export const NAME_TOO_LONG = `Name too long: file and folder names are limited to ${MAX_NAME_BYTES} bytes`;
