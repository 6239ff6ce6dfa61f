import { MASKED_SECRET } from '#contracts/models.js';

/**
 * Secret-bearing keys, decided on the key's words (camelCase, snake_case, kebab-case and
 * UPPER_CASE are split): a key is secret when its last word is one of SECRET_WORDS, or when
 * it ends in "key" after a word of KEY_QUALIFIERS ("apiKey", "OPENAI_API_KEY",
 * "private_key"). So `accessToken`, `GITHUB_TOKEN`, `password`, `clientSecret` are secret,
 * while `maxOutputTokens`, `tokenExpires`, `passwordHint` and a bare `key` are not. A last
 * word that merely ends in a secret word (`PGPASSWORD`, `dbpassword`, `csrftoken`) is secret
 * too, and so is a key named `auth` (registry and proxy settings keep credentials there).
 * A signature (`X-Signature`) and a session id (`sessionId`) are secret too. Independently of
 * keys, wherever a string holds them, a password inside a URL (`postgres://user:pw@host`), a
 * query parameter with a secret name (`?api_key=…`, `&token=…`) and the credentials after
 * `Bearer` or `Basic` are masked.
 */
const SECRET_WORDS = new Set([
  'token',
  'password',
  'passwd',
  'pwd',
  'secret',
  'passphrase',
  'credential',
  'credentials',
  'authorization',
  'cookie',
  'apikey',
  'auth',
  'signature',
]);
/** Two-word names that are secret although their last word is not (`sessionId`, `session_key`). */
const SECRET_PAIRS = new Set(['session id', 'session key', 'session secret']);
/** A last word ending in one of these is secret (`pgpassword`, `dbpasswd`, `csrftoken`). */
const SECRET_SUFFIXES = ['password', 'passwd', 'secret', 'passphrase', 'apikey', 'token'];
const KEY_QUALIFIERS = new Set([
  'api',
  'private',
  'secret',
  'access',
  'client',
  'signing',
  'encryption',
  'auth',
  'license',
]);

export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

export function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (SECRET_WORDS.has(last)) return true;
  if (SECRET_SUFFIXES.some((suffix) => last.endsWith(suffix))) return true;
  if (words.length > 1 && SECRET_PAIRS.has(`${words[words.length - 2]} ${last}`)) return true;
  return last === 'key' && words.length > 1 && KEY_QUALIFIERS.has(words[words.length - 2]!);
}

/** Whether a value under a secret key carries something to hide ('' and null say "none"). */
function hasSecret(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A deep copy with every secret-bearing value replaced by "***", at any depth and inside
 * arrays. Empty values stay as they are so a client can tell "no key" from "a key".
 */
export function maskSecrets<T>(value: T): T {
  return mask(value) as T;
}

/** `scheme://user:password@` (user may be empty): the password is what gets masked. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):([^\s/?#@]+)@/gi;

/** A string with every password inside a URL replaced: `postgres://u:pw@h` → `postgres://u:***@h`. */
export function maskUrlPasswords(text: string): string {
  return text.replace(URL_PASSWORD, (_match, userPart: string, password: string) =>
    password === MASKED_SECRET ? _match : `${userPart}:${MASKED_SECRET}@`,
  );
}

/** `?name=value` or `&name=value` in a URL or text: the value of a secret-named parameter is masked. */
const QUERY_PARAMETER = /([?&])([^=&#\s]+)=([^&#\s]*)/g;
/** `Bearer <token>` or `Basic <credentials>`, in a header value or anywhere in a text. */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+([A-Za-z0-9\-._~+/]+=*)/gi;

/** A string with every secret it carries masked: URL passwords, secret query parameters, bearer tokens. */
export function maskSecretsInText(text: string): string {
  return maskUrlPasswords(text)
    .replace(QUERY_PARAMETER, (match, lead: string, name: string, value: string) =>
      value !== '' && value !== MASKED_SECRET && isSecretKey(decodeName(name))
        ? `${lead}${name}=${MASKED_SECRET}`
        : match,
    )
    .replace(AUTH_SCHEME, (match, scheme: string, credentials: string) =>
      credentials === MASKED_SECRET ? match : `${scheme} ${MASKED_SECRET}`,
    );
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function mask(value: unknown): unknown {
  if (typeof value === 'string') return maskSecretsInText(value);
  if (Array.isArray(value)) return value.map(mask);
  if (!isPlainObject(value)) return value;
  // fromEntries defines own properties, so a "__proto__" key stays data.
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, isSecretKey(k) && hasSecret(v) ? MASKED_SECRET : mask(v)]),
  );
}

/**
 * The inverse for writes: wherever `incoming` holds "***" under a secret key, the value
 * stored at the same place is put back (the key is dropped when nothing is stored there),
 * so a client may send back what it read. Array items are paired by their `id` when both
 * sides have one, else by position. A stored secret only goes where it was stored for: in an
 * object whose address (`url`, `apiUrl`, `baseUrl`, `endpoint`) changes, a "***" is refused
 * with a message naming its place (`at`, the path of `incoming`), and the secret must be sent again.
 */
export function restoreMaskedSecrets<T>(incoming: T, stored: unknown, at = ''): T {
  return restore(incoming, stored, at, null) as T;
}

/** Keys that name where an object's secrets are sent. */
const ADDRESS_KEYS = ['url', 'apiUrl', 'baseUrl', 'endpoint'];

/** Thrown for a "***" under an object whose address changed (the caller answers it as a 400). */
export class MovedSecretError extends Error {
  constructor(
    readonly field: string,
    readonly addressField: string,
  ) {
    super(
      `${field} must be sent again: ${addressField} changed, and a stored secret is only ever sent to the address it was stored with`,
    );
  }
}

const join = (at: string, key: string | number): string =>
  typeof key === 'number' ? `${at}[${key}]` : at === '' ? key : `${at}.${key}`;

function restore(incoming: unknown, stored: unknown, at: string, moved: string | null): unknown {
  // A URL sent back as read: its masked password is the stored one.
  if (typeof incoming === 'string' && typeof stored === 'string' && incoming !== stored) {
    return maskSecretsInText(stored) === incoming ? stored : incoming;
  }
  if (Array.isArray(incoming)) {
    const storedItems = Array.isArray(stored) ? stored : [];
    const byId = new Map<string, unknown>();
    for (const item of storedItems) {
      if (isPlainObject(item) && typeof item.id === 'string') byId.set(item.id, item);
    }
    return incoming.map((item, i) => {
      const id = isPlainObject(item) && typeof item.id === 'string' ? item.id : undefined;
      return restore(item, id !== undefined ? byId.get(id) : storedItems[i], join(at, i), moved);
    });
  }
  if (!isPlainObject(incoming)) return incoming;
  const base = isPlainObject(stored) ? stored : {};
  const addressKey = ADDRESS_KEYS.find(
    (k) =>
      typeof incoming[k] === 'string' &&
      typeof base[k] === 'string' &&
      restore(incoming[k], base[k], '', null) !== base[k],
  );
  const movedHere = addressKey !== undefined ? join(at, addressKey) : moved;
  const entries: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(incoming)) {
    if (v === MASKED_SECRET && isSecretKey(k)) {
      if (Object.hasOwn(base, k) && hasSecret(base[k])) {
        if (movedHere !== null) throw new MovedSecretError(join(at, k), movedHere);
        entries.push([k, base[k]]);
      }
      continue;
    }
    entries.push([k, restore(v, Object.hasOwn(base, k) ? base[k] : undefined, join(at, k), movedHere)]);
  }
  return Object.fromEntries(entries);
}
