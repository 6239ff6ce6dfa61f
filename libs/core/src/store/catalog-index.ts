import { STORE_ENTRY_TYPES, type StoreEntry, type StoreEntryType } from '#contracts/store.js';

/** Slug: `id` or `author/id`, lower-case letters, digits and `-` (docs/api/store-and-packages.md, "Catalog entries"). */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,99})(?:\/[a-z0-9](?:[a-z0-9-]{0,99}))?$/;
const REQUIRED_TEXT = ['slug', 'name', 'version', 'author', 'description', 'path'] as const;
const OPTIONAL_TEXT = [
  'download_url',
  'display_name',
  'icon',
  'locale',
  'min_app_version',
  'checksum',
  'created_at',
  'updated_at',
  'format',
] as const;

/** The split index files, read first; `index.json` holds the same in one file. */
export const SPLIT_INDEX_FILES = ['digital-humans.json', 'skills.json', 'mcps.json'] as const;
export const SINGLE_INDEX_FILE = 'index.json';

export interface ParsedIndex {
  entries: StoreEntry[];
  /** Entries left out for breaking a rule, with the reason of each (first few). */
  skipped: number;
  problems: string[];
}

export function isSlug(value: unknown): value is string {
  return typeof value === 'string' && SLUG.test(value);
}

/**
 * A relative folder or file path inside a source: no `..`, no leading `/`, no backslash, no
 * drive letter, no empty segment. Entry paths end up in URLs; this keeps them under the source.
 */
export function isSafeRelativePath(value: unknown): value is string {
  if (typeof value !== 'string' || value === '' || value.length > 500) return false;
  if (value.startsWith('/') || value.includes('\\') || /^[a-zA-Z]:/.test(value) || value.includes('\0')) return false;
  const parts = value.replace(/\/+$/, '').split('/');
  return parts.every((p) => p !== '' && p !== '.' && p !== '..');
}

const textArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((t) => typeof t === 'string');

/**
 * Size limits of one entry: every text field, the tag list, and the whole entry as JSON. A
 * catalog is shown whole in every query answer, so one oversized entry would weigh on all of
 * them; it is skipped and counted instead.
 */
export const ENTRY_LIMITS = { textChars: 10_000, tags: 50, tagChars: 64, entryChars: 64 * 1024 } as const;

/** The first text field (at any depth) longer than the limit, by its path, or null. */
function oversizedText(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.length > ENTRY_LIMITS.textChars ? path : null;
  if (depth > 8 || typeof value !== 'object' || value === null) return null;
  for (const [key, inner] of Object.entries(value)) {
    const found = oversizedText(inner, path === '' ? key : `${path}.${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}

/** Checks one entry; answers the normalized entry or the reason it is left out. */
export function validateEntry(raw: unknown): StoreEntry | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'entry is not an object';
  const e = raw as Record<string, unknown>;
  const tooLong = oversizedText(e, '');
  if (tooLong) return `${tooLong} is longer than ${ENTRY_LIMITS.textChars} characters`;
  if (Array.isArray(e.tags) && e.tags.length > ENTRY_LIMITS.tags) return `at most ${ENTRY_LIMITS.tags} tags`;
  if (Array.isArray(e.tags) && e.tags.some((t) => typeof t === 'string' && t.length > ENTRY_LIMITS.tagChars)) {
    return `tags are at most ${ENTRY_LIMITS.tagChars} characters`;
  }
  if (JSON.stringify(e).length > ENTRY_LIMITS.entryChars)
    return `entry is larger than ${ENTRY_LIMITS.entryChars} characters as JSON`;
  for (const key of REQUIRED_TEXT) {
    if (typeof e[key] !== 'string' || (e[key] as string).trim() === '') return `${key} is required`;
  }
  if (!isSlug(e.slug)) return `slug "${String(e.slug)}" is not lower-case letters, digits and - (id or author/id)`;
  if (!STORE_ENTRY_TYPES.includes(e.type as StoreEntryType)) {
    return `type must be one of ${STORE_ENTRY_TYPES.join(', ')}`;
  }
  if (!isSafeRelativePath(e.path)) return 'path must be a relative folder inside the source';
  if (e.format !== undefined && e.format !== 'bundle') return 'format must be bundle when present';
  const entry: StoreEntry = {
    slug: e.slug,
    name: e.name as string,
    version: e.version as string,
    author: e.author as string,
    description: e.description as string,
    type: e.type as StoreEntryType,
    path: (e.path as string).replace(/\/+$/, ''),
    category: typeof e.category === 'string' && e.category !== '' ? e.category : 'other',
    tags: textArray(e.tags) ? e.tags : [],
  };
  for (const key of OPTIONAL_TEXT) {
    if (e[key] === undefined) continue;
    if (typeof e[key] !== 'string') return `${key} must be a string`;
    entry[key] = e[key] as string;
  }
  if (entry.download_url !== undefined && !/^https?:\/\//i.test(entry.download_url)) {
    return 'download_url must be an http(s) URL';
  }
  for (const key of ['requires_mcps', 'requires_skills'] as const) {
    if (e[key] === undefined) continue;
    if (!textArray(e[key])) return `${key} must be an array of strings`;
    entry[key] = e[key] as string[];
  }
  if (e.size_bytes !== undefined) {
    if (typeof e.size_bytes !== 'number' || !(e.size_bytes >= 0)) return 'size_bytes must be a number';
    entry.size_bytes = e.size_bytes;
  }
  if (e.i18n !== undefined) {
    const i18n = checkI18n(e.i18n);
    if (typeof i18n === 'string') return i18n;
    entry.i18n = i18n;
  }
  if (e.meta !== undefined && typeof e.meta === 'object' && e.meta !== null && !Array.isArray(e.meta)) {
    entry.meta = e.meta as Record<string, unknown>;
  }
  return entry;
}

function checkI18n(raw: unknown): StoreEntry['i18n'] | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'i18n must be an object';
  const out: NonNullable<StoreEntry['i18n']> = {};
  for (const [tag, block] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof block !== 'object' || block === null) return `i18n.${tag} must be an object`;
    const b = block as Record<string, unknown>;
    out[tag] = {
      ...(typeof b.name === 'string' ? { name: b.name } : {}),
      ...(typeof b.description === 'string' ? { description: b.description } : {}),
    };
  }
  return out;
}

/**
 * Reads index documents (the three split files, or `index.json` alone): each must be an object
 * with `version` 1 and an `apps` array, else the whole document is invalid (null). Entries are
 * validated one by one; a bad entry is skipped and counted, and a slug seen before is skipped.
 */
export function parseIndexDocuments(docs: unknown[]): ParsedIndex | null {
  const result: ParsedIndex = { entries: [], skipped: 0, problems: [] };
  const seen = new Set<string>();
  for (const doc of docs) {
    if (!isIndexDocument(doc)) return null;
    for (const raw of doc.apps) addEntry(result, seen, validateEntry(raw));
  }
  return result;
}

/**
 * Adds one validated entry to a parsed index, or counts it as skipped with its reason (an
 * invalid entry, or a slug already in `seen`); the first ten reasons are kept.
 */
export function addEntry(result: ParsedIndex, seen: Set<string>, entry: StoreEntry | string): void {
  const reason = typeof entry === 'string' ? entry : seen.has(entry.slug) ? `slug ${entry.slug} repeats` : null;
  if (reason !== null || typeof entry === 'string') {
    result.skipped++;
    if (result.problems.length < 10) result.problems.push(reason ?? 'invalid');
    return;
  }
  seen.add(entry.slug);
  result.entries.push(entry);
}

export function isIndexDocument(doc: unknown): doc is { version: number; apps: unknown[] } {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  const d = doc as Record<string, unknown>;
  return d.version === 1 && Array.isArray(d.apps);
}
